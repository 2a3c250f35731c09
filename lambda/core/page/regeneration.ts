/**
 * What a regeneration is asked for and what it answers: the contract the origin's MISS (which
 * is given a regeneration, `InRequestRegeneration`) and the worker share with `regenerate`.
 */
import type { FailurePolicy } from '../backoff.js';
import type { LeaseHolder } from '../errors.js';
import type { BudgetDeps } from './budget.js';
import type { CacheKeyPolicy } from './cache-key.js';
import type { Need } from './freshness.js';
import type { IdempotencySeal } from './ports.js';
import type { CacheKey, CacheMeta, RenderResult } from './model.js';

export interface RegenerateInput {
  readonly cacheKey: CacheKey;
  /** What the render is for; the skip rule (`isAnswered`) reads it once the lease is held. */
  readonly need: Need;
  readonly seal?: IdempotencySeal | undefined;
  readonly owner?: string | undefined;
}

/** How a regeneration ended: `new` and `unchanged` carry what is live; the others why not. */
export type RegenerateOutcome =
  | { readonly decision: 'new'; readonly meta: CacheMeta; readonly page: RenderResult }
  /** A gone path's 404 or 410, kept inline in one row (`meta` is the row as a generation). */
  | { readonly decision: 'gone'; readonly meta: CacheMeta; readonly page: RenderResult }
  /** The render equalled the live generation: only its freshness moved on (`meta` as it is now). */
  | { readonly decision: 'unchanged'; readonly meta: CacheMeta; readonly page: RenderResult }
  | { readonly decision: 'fresh'; readonly meta: CacheMeta | undefined }
  | { readonly decision: 'held'; readonly holdUntil: number }
  | { readonly decision: 'lease-held'; readonly holder: LeaseHolder | undefined }
  | { readonly decision: 'lease-lost' }
  | { readonly decision: 'superseded'; readonly currentGeneratedAt: number | undefined }
  | { readonly decision: 'duplicate' };

/**
 * What both callers of a regeneration, the origin's MISS and the worker, bring to it from the
 * service's settings: one cache-key policy, one failure backoff, one lease owner, one budget.
 */
export interface RegenerationCaller {
  readonly keyPolicy: CacheKeyPolicy;
  /** @default DEFAULT_FAILURE_POLICY */
  readonly failurePolicy?: FailurePolicy | undefined;
  /** The lease owner its LOCK rows name (`RegenerateInput.owner`): the function's name. */
  readonly owner?: string | undefined;
  /**
   * The regeneration budget (`budget.ts`): the worker spends it, the origin reads it for a stale
   * page's `detail=budget` (`budget-status.ts`). @default - unlimited
   */
  readonly budget?: BudgetDeps | undefined;
}
