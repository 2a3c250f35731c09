/**
 * What a regeneration is asked for and what it answers: the contract the origin's MISS (which
 * is given a regeneration, `InRequestRegeneration`) and the worker share with `regenerate`.
 */
import type { LeaseHolder } from '../errors.js';
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

/** How a regeneration ended: `new` carries what it published; the others why it did not. */
export type RegenerateOutcome =
  | { readonly decision: 'new'; readonly meta: CacheMeta; readonly page: RenderResult }
  | { readonly decision: 'fresh'; readonly meta: CacheMeta | undefined }
  | { readonly decision: 'held'; readonly holdUntil: number }
  | { readonly decision: 'lease-held'; readonly holder: LeaseHolder | undefined }
  | { readonly decision: 'lease-lost' }
  | { readonly decision: 'superseded'; readonly currentGeneratedAt: number | undefined }
  | { readonly decision: 'duplicate' };
