/**
 * What a revalidation is and what it did, as every step of revalidate/ reads it: apart from
 * `revalidation.ts`, so the soft purge, the fan-out, the status and the request import these
 * without importing the use case that imports them.
 */
import type { CacheKey, RevalidationMode } from '../page/model.js';
import type { CdnPurge } from '../page/ports.js';

/** What to revalidate, validated: keys from `paths`, tags normalised (`page/cache-tags.ts`). */
export interface Revalidation {
  readonly tenant: string | undefined;
  readonly keys: readonly CacheKey[];
  readonly tags: readonly string[];
  readonly mode: RevalidationMode;
  readonly regenerate: boolean;
  /** Stable for one idempotency key, so a retry after a crash repeats the same effect. */
  readonly effectId: string;
  /** How many of these pages' intents carry a soft purge (`soft-purge.ts`). @default 0 */
  readonly softPurgeLimit?: number | undefined;
}

/** What a revalidation did. */
export interface RevalidationEffect {
  /** Distinct pages marked (a cached page under a key, or tagged with a tag). */
  readonly pages: number;
  /** Regeneration intents queued (`regenerate: true`); none for a held page. */
  readonly regenerations: number;
  /** Marked pages an operator holds: served as they are until the hold ends (`stale` only). */
  readonly held: HeldPages;
  readonly cdn: CdnPurge | DeferredPurge;
}

/** Held pages: how many, and the first `HELD_PAGES_LISTED` of them. */
export interface HeldPages {
  readonly count: number;
  readonly pages: readonly { readonly key: string; readonly holdUntil: number }[];
}

/** The CDN purge of a revalidation that waits for its pages' new generations. */
export interface DeferredPurge {
  readonly status: 'deferred';
  readonly deadlineSeconds: number;
  /** When the last deadline purge is due; undefined while tags are still being marked. */
  readonly deadlineAtMs: number | undefined;
}
