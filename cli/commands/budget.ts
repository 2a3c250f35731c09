/**
 * `isr budget`: the regeneration budget of the site (or a tenant), this minute's regenerations
 * and the intents waiting for a later minute (`lambda/core/page/budget.ts`). Reads only: one
 * GetItem for the count, one Query of the deferred rows.
 */
import { DynamoRegenerationBudget } from '../../lambda/adapters/regeneration-budget/dynamodb.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import {
  budgetScopeOf,
  budgetWindowOf,
  intentOfDeferred,
  windowEndOf,
  type DeferredIntent,
} from '../../lambda/core/page/budget.js';
import type { Target } from '../target.js';

export interface BudgetView {
  /** Regenerations a minute; null when the stack sets none (unlimited). */
  readonly budget: number | null;
  readonly tenant: string | null;
  /** This minute's regenerations, and when the next minute's budget opens (epoch seconds). */
  readonly thisMinute: number;
  readonly nextWindowAt: number;
  /** Deferred intents read (at most `limit`); `truncated` when there may be more. */
  readonly deferred: number;
  readonly truncated: boolean;
  readonly pages: readonly DeferredPage[];
}

export interface DeferredPage {
  readonly pk: string;
  /** The page's path and query, as the intent names it. */
  readonly page: string;
  readonly deferredAt: number;
  /** A revalidation's intent (it may carry a soft purge), not a stale hit's. */
  readonly explicit: boolean;
}

export async function budgetView(deps: {
  readonly target: Pick<Target, 'clients' | 'tableName' | 'settings'>;
  readonly clock: Clock;
  readonly tenant?: string | undefined;
  readonly limit?: number | undefined;
}): Promise<BudgetView> {
  const budget = new DynamoRegenerationBudget({
    client: deps.target.clients.dynamodb,
    tableName: deps.target.tableName,
  });
  const limit = deps.limit ?? 100;
  const scope = budgetScopeOf(deps.tenant);
  const window = budgetWindowOf(epochSeconds(deps.clock));
  const [thisMinute, rows] = await Promise.all([
    budget.count(scope, window),
    budget.deferred(limit, scope),
  ]);
  return {
    budget: deps.target.settings.regenerationBudget ?? null,
    tenant: deps.tenant ?? null,
    thisMinute,
    nextWindowAt: windowEndOf(window),
    deferred: rows.length,
    truncated: rows.length >= limit,
    pages: rows.map(pageOf),
  };
}

function pageOf(row: DeferredIntent): DeferredPage {
  let page = '(unreadable intent)';
  try {
    const intent = intentOfDeferred(row);
    page = intent.query === '' ? intent.path : `${intent.path}?${intent.query}`;
  } catch {
    // Shown as unreadable: the next catch-up forgets such a row and reports it.
  }
  return { pk: row.pk, page, deferredAt: row.deferredAt, explicit: row.explicit };
}

/** The human rendering: the budget line, then up to 20 waiting pages, oldest first. */
export function formatBudget(view: BudgetView, now: number): string {
  const who = view.tenant === null ? 'the site' : `tenant ${view.tenant}`;
  const cap = view.budget === null ? 'unlimited' : `${view.budget} a minute`;
  const lines = [
    `regeneration budget of ${who}: ${cap}`,
    `this minute: ${view.thisMinute} regeneration(s); next minute in ${view.nextWindowAt - now} s`,
    `deferred: ${view.deferred}${view.truncated ? '+' : ''} page(s) waiting`,
  ];
  const oldest = [...view.pages].sort((a, b) => a.deferredAt - b.deferredAt).slice(0, 20);
  for (const page of oldest) {
    const kind = page.explicit ? 'revalidation' : 'stale hit';
    lines.push(`  ${page.page}  (${kind}, waiting ${now - page.deferredAt} s)`);
  }
  return lines.join('\n');
}
