/**
 * A stale page served while its site (or tenant) has spent this minute's regeneration budget
 * says so: `Cache-Status: facetheory-isr; fwd=stale; ttl=…; detail=budget`. Its intent is still
 * queued (SQS deduplicates it); the worker defers it to a later minute (`core/page/budget.ts`).
 */
import type { CacheKey } from '../page/model.js';
import { budgetScopeOf, budgetWindowOf } from '../page/budget.js';
import type { OriginDeps } from './request.js';
import type { PageResponse } from './responses.js';

/** RFC 9211 `detail` of a stale page whose regeneration waits for the budget. */
export const BUDGET_DETAIL = 'budget';

/**
 * Whether this minute's budget is spent, read beside the body (0.5 RCU, eventually consistent:
 * a count a moment late only delays the `detail`). A failed read is logged and says no.
 */
export async function budgetSpent(
  deps: Pick<OriginDeps, 'budget' | 'log'>,
  cacheKey: CacheKey,
  nowSeconds: number,
): Promise<boolean> {
  if (deps.budget === undefined) return false;
  try {
    const scope = budgetScopeOf(cacheKey.tenant);
    const count = await deps.budget.budget.count(scope, budgetWindowOf(nowSeconds));
    return count >= deps.budget.perMinute;
  } catch (error) {
    deps.log?.warn('could not read the regeneration budget', {
      cacheKeyHash: cacheKey.hash,
      error,
    });
    return false;
  }
}

/** The answer with `detail=budget` added to its Cache-Status. */
export function withBudgetDetail(response: PageResponse): PageResponse {
  const status = response.headers['cache-status'];
  if (status === undefined) return response;
  return {
    ...response,
    headers: { ...response.headers, 'cache-status': `${status}; detail=${BUDGET_DETAIL}` },
  };
}
