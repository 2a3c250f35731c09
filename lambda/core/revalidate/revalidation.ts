/**
 * On-demand revalidation of pages by cache key and by tag (the use case behind
 * `POST /_isr/revalidate`). Once it returns, no viewer request for an affected page is answered
 * as fresh with a generation rendered before it:
 * - `stale` marks each page's META stale (Recipe A readers see `revalidate_seconds = 0` too), so
 *   the next request serves it STALE and queues one regeneration;
 * - `expire` deletes META: the old body is never served again and the next request renders;
 * - `regenerate` also queues a regeneration of each page now.
 * A render in flight (it holds the page's LOCK) that started before is caught by a mark on LOCK,
 * written before META's: its publish is refused and it renders again. For the pages found here
 * no clock decides it, so a render that started in the same second cannot slip through. A page
 * whose render gives it one of the tags while this runs is not in the index yet: that render
 * compares the tag's revalidation time with its own start instead (`indexGainedTags`).
 */
import { cdnKeyTagOf, cdnTagOf } from '../cache-tags.js';
import type { CacheKey } from '../cache-key.js';
import { epochSeconds, type Clock } from '../clock.js';
import { regenerationIntent } from '../intent.js';
import type {
  CacheMeta,
  CdnInvalidator,
  CdnPurge,
  RegenerationQueue,
  RevalidationMarks,
  TagRevalidations,
} from '../ports.js';

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
  readonly marks: RevalidationMarks;
  readonly tagIndex: TagRevalidations;
  readonly queue: RegenerationQueue;
  readonly cdn: CdnInvalidator;
  readonly clock: Clock;
  readonly deployId: string;
  /** Pages marked at once during a tag's fan-out. @default 32 */
  readonly fanOutConcurrency?: number;
}

/** A page found for the revalidation: where it lives, and its key when a path named it. */
interface Target {
  readonly pk: string;
  readonly key?: CacheKey | undefined;
}

/**
 * Applies a revalidation. Order: each tag's revalidation time first (a render that gives a page
 * one of these tags afterwards sees it, see `gainedRevalidatedTag`), then every affected page
 * (its LOCK, then its META), then the regenerations, then the CDN. Marking is idempotent, so a
 * retry of the same effect after a crash repeats it safely.
 */
export async function revalidate(
  deps: RevalidationDeps,
  revalidation: Revalidation,
): Promise<RevalidationEffect> {
  const { tenant, tags, effectId } = revalidation;
  await Promise.all(
    tags.map((tag) =>
      deps.tagIndex.recordRevalidation(tenant, tag, { effectId, atMs: deps.clock.now() }),
    ),
  );
  const targets = await targetsOf(deps, revalidation);
  const marked = await mapBounded(targets, deps.fanOutConcurrency ?? 32, (target) =>
    markPage(deps, revalidation, target),
  );
  const pages = marked.filter((found) => found !== undefined);
  const regenerations = revalidation.regenerate
    ? await queueRegenerations(deps, revalidation, targets, marked)
    : 0;
  // The effect id makes a retried revalidation's purge the same CloudFront invalidation.
  const cdn = await deps.cdn.invalidateTags(
    [
      ...tags.map((tag) => cdnTagOf(tenant, tag)),
      ...revalidation.keys.map((key) => cdnKeyTagOf(key)),
    ],
    { effectId },
  );
  return { pages: pages.length, regenerations, cdn };
}

/** The pages named by path, then every page indexed under a tag, each once. */
async function targetsOf(deps: RevalidationDeps, revalidation: Revalidation): Promise<Target[]> {
  const targets = new Map<string, Target>();
  for (const key of revalidation.keys) targets.set(key.pk, { pk: key.pk, key });
  for (const tag of revalidation.tags) {
    let cursor: string | undefined;
    do {
      const page = await deps.tagIndex.pages(revalidation.tenant, tag, cursor);
      for (const pk of page.pks) if (!targets.has(pk)) targets.set(pk, { pk });
      cursor = page.next;
    } while (cursor !== undefined);
  }
  return [...targets.values()];
}

/** LOCK first, then META: see the module comment. @returns META as it was, if any */
async function markPage(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  target: Target,
): Promise<CacheMeta | undefined> {
  await deps.marks.markLock(target.pk, revalidation.effectId);
  return revalidation.mode === RevalidationMode.Expire
    ? deps.marks.expire(target.pk)
    : deps.marks.markStale(target.pk, {
        effectId: revalidation.effectId,
        now: epochSeconds(deps.clock),
      });
}

/**
 * Queues a regeneration of each page now, as an explicit intent (no observed generation: it is
 * not held back by a failure backoff). A page is known by the path that named it or, found by
 * tag, by the cache key its META recorded.
 */
async function queueRegenerations(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  targets: readonly Target[],
  marked: readonly (CacheMeta | undefined)[],
): Promise<number> {
  let queued = 0;
  for (const [index, target] of targets.entries()) {
    const address = target.key ?? addressOf(marked[index]);
    if (address === undefined) continue;
    const page = { tenant: revalidation.tenant, ...address, pk: target.pk };
    const intent = regenerationIntent(page, deps.deployId, {
      kind: 'revalidation',
      effectId: revalidation.effectId,
    });
    await deps.queue.enqueue(intent.intent, intent);
    queued += 1;
  }
  return queued;
}

/** Path and query of a page from the cache key its META recorded (`cache_key`). */
function addressOf(meta: CacheMeta | undefined): { path: string; query: string } | undefined {
  if (meta?.cacheKey === undefined) return undefined;
  const at = meta.cacheKey.indexOf('?');
  return at === -1
    ? { path: meta.cacheKey, query: '' }
    : { path: meta.cacheKey.slice(0, at), query: meta.cacheKey.slice(at + 1) };
}

/** `work` over `items`, at most `limit` at a time, results in order. */
async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  });
  await Promise.all(runners);
  return results;
}
