/**
 * The worker's side of the budget: an intent that would render counts one regeneration in its
 * window first; past the cap it is deferred (one row per page) and its message acknowledged.
 */
import { Decision, type Disposition } from '../decision.js';
import type { RegenerationIntent } from '../page/intent.js';
import {
  budgetScopeOf,
  budgetWindowOf,
  deferredOf,
  windowEndOf,
  type BudgetDeps,
} from '../page/budget.js';

/**
 * Undefined when the regeneration may run (it is counted); else the deferral's disposition. A
 * deferred message is acknowledged, not retried: a retry would spend a receive of the queue's
 * redrive budget per window and end in the DLQ, and FIFO queues take no per-message delay.
 */
export async function spendOrDefer(
  deps: BudgetDeps,
  page: { readonly pk: string; readonly intent: RegenerationIntent; readonly body: string },
  nowSeconds: number,
): Promise<Disposition | undefined> {
  const scope = budgetScopeOf(page.intent.tenant);
  const window = budgetWindowOf(nowSeconds);
  if (await deps.budget.take(scope, window, deps.perMinute)) return undefined;
  await deps.budget.defer(deferredOf(page.pk, page.intent, page.body, nowSeconds));
  const detail = { budget: deps.perMinute, window, nextWindowAt: windowEndOf(window) };
  return { decision: Decision.Deferred, action: 'ack', detail };
}
