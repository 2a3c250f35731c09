/**
 * On-demand revalidation of pages by cache key and by tag (the use case behind
 * `POST /_isr/revalidate`). Once it returns, no viewer request for an affected page is answered
 * as fresh with a generation rendered before it:
 * - `stale` marks each page's META stale (Recipe A readers see `revalidate_seconds = 0` too), so
 *   the next request serves it STALE and queues one regeneration;
 * - `expire` deletes META: the old body is never served again and the next request renders;
 * - `regenerate` also queues a regeneration of each page now.
 * A render in flight (it holds the page's LOCK) that started before is caught by a mark on LOCK,
 * written before META's: its publish is refused and it renders again. No clock decides it, so
 * a render that started in the same second cannot slip through.
 */
import type { CacheKey } from './cache-key.js';
import type { Clock } from './clock.js';
import type { CacheTable, CdnInvalidator, CdnPurge, RegenerationQueue } from './ports.js';
import type { LogSink } from './regenerate.js';

export const RevalidationMode = { Stale: 'stale', Expire: 'expire' } as const;
export type RevalidationMode = (typeof RevalidationMode)[keyof typeof RevalidationMode];

/** What to revalidate, validated: keys from `paths`, tags normalised (`core/cache-tags.ts`). */
export interface Revalidation {
  readonly tenant: string | undefined;
  readonly keys: readonly CacheKey[];
  readonly tags: readonly string[];
  readonly mode: RevalidationMode;
  readonly regenerate: boolean;
  /** Stable for one idempotency key, so a retry after a crash repeats the same effect. */
  readonly effectId: string;
}

/** What a revalidation did. */
export interface RevalidationEffect {
  /** Distinct pages marked (a cached page under a key, or tagged with a tag). */
  readonly pages: number;
  /** Regeneration intents queued (`regenerate: true`). */
  readonly regenerations: number;
  readonly cdn: CdnPurge;
}

export interface RevalidationDeps {
  readonly cacheTable: CacheTable;
  readonly queue: RegenerationQueue;
  readonly cdn: CdnInvalidator;
  readonly clock: Clock;
  readonly deployId: string;
  /** Pages marked at once during a tag's fan-out. @default 32 */
  readonly fanOutConcurrency?: number;
  readonly log?: LogSink | undefined;
}
