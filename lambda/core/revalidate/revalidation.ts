/**
 * On-demand revalidation of pages by cache key and by tag (the use case behind
 * `POST /_isr/revalidate`). Once it returns, no viewer request for an affected page is answered
 * as fresh with a generation rendered before it:
 * - `stale` marks each page's META stale (Recipe A readers see `revalidate_seconds = 0` too), so
 *   the next request serves it STALE and queues one regeneration;
 * - `expire` deletes META: the old body is never served again and the next request renders;
 * - `regenerate` also queues a regeneration of each page now.
 * A render in flight that started before is caught by the mark itself: its publish is
 * conditioned on META's mark being the one it read under its lease (or, for a first render, on a
 * mark on its LOCK, written when META is absent), so it is refused and renders again. For the
 * pages found here no clock decides it, so a render that started in the same second cannot slip
 * through. A page
 * whose render gives it one of the tags while this runs is not in the index yet: that render
 * compares the tag's revalidation time with its own start instead (`indexGainedTags`).
 */
import { retryConflicts } from '../conflict-retry.js';
import { cdnKeyTagOf, cdnTagOf } from '../page/cache-tags.js';
import { RevalidationMode, type CacheKey, type CacheMeta } from '../page/model.js';
import { epochSeconds, type Clock } from '../clock.js';
import type { Random } from '../random.js';
import { isHeld } from '../page/freshness.js';
import { regenerationIntent, type QueuedIntent } from '../page/intent.js';
import { VARIANT_SEPARATOR, variantTagOf } from '../page/variants.js';
import type { CdnInvalidator, CdnPurge } from '../page/ports.js';
import type { BatchRegenerationQueue, RevalidationMarks, TagRevalidations } from './ports.js';
import { defersPurge, sendDeadline, withSoftPurges, type SoftPurgeDeps } from './soft-purge.js';
import type { DeferredPurge, HeldPages, Revalidation, RevalidationEffect } from './model.js';

/** Held pages a receipt lists at most: enough to act on, bounded whatever the page count. */
export const HELD_PAGES_LISTED = 20;

export interface RevalidationDeps {
  readonly marks: RevalidationMarks;
  readonly tagIndex: TagRevalidations;
  readonly queue: BatchRegenerationQueue;
  readonly cdn: CdnInvalidator;
  readonly clock: Clock;
  /** Jitter of the waits after a transaction conflict (`conflict-retry.ts`). @default the system's */
  readonly random?: Random | undefined;
  readonly deployId: string;
  /** Pages marked at once (`ISR_FAN_OUT_CONCURRENCY`). @default 32 */
  readonly fanOutConcurrency?: number;
  /** Soft purges (`regenerate: true`): the purge queue, deadline and bound. @default - none */
  readonly softPurge?: SoftPurgeDeps | undefined;
}

/**
 * The variant tags of a revalidation's paths (`page/variants.ts`). Their times are recorded as
 * its tags' are: a variant's first render, not indexed yet, compares its start with them.
 */
export const variantTagsOf = (revalidation: Pick<Revalidation, 'keys'>): string[] =>
  revalidation.keys.map((key) => variantTagOf(key.pageHash ?? key.hash));

/** A page found: where it lives, its key when a path named it, the tags it was found under. */
export interface Target {
  readonly pk: string;
  readonly key?: CacheKey | undefined;
  readonly foundUnder: string[];
}

/**
 * Applies a revalidation. Order: each tag's revalidation time first (a render that gives a page
 * one of these tags afterwards sees it, see `gainedRevalidatedTag`), then every affected page
 * (`markPage`), then the regenerations, then the CDN. Marking is idempotent, so a
 * retry of the same effect after a crash repeats it safely.
 */
export async function revalidate(
  deps: RevalidationDeps,
  revalidation: Revalidation,
): Promise<RevalidationEffect> {
  const { tenant, tags, effectId } = revalidation;
  await Promise.all(
    [...tags, ...variantTagsOf(revalidation)].map((tag) =>
      deps.tagIndex.recordRevalidation(tenant, tag, { effectId, atMs: deps.clock.now() }),
    ),
  );
  const targets = await pagesToMark(deps, revalidation);
  const marking = withSoftPurges(deps, revalidation);
  const { pages, regenerations, held } = await markTargets(deps, marking, targets);
  return { pages, regenerations, held, cdn: await purgeMarked(deps, revalidation) };
}

/**
 * The CDN purge once every page is marked: its tags and its paths' key tags, at once, or with
 * soft purges (`soft-purge.ts`) queued for the deadline instead.
 */
async function purgeMarked(
  deps: RevalidationDeps,
  revalidation: Revalidation,
): Promise<CdnPurge | DeferredPurge> {
  const { tenant, tags, effectId } = revalidation;
  const cdnTags = [
    ...tags.map((tag) => cdnTagOf(tenant, tag)),
    ...revalidation.keys.map((key) => cdnKeyTagOf(key)),
  ];
  if (defersPurge(deps, revalidation)) {
    return sendDeadline(deps, effectId, cdnTags, { final: true });
  }
  // The effect id makes a retried revalidation's purge the same CloudFront invalidation.
  return deps.cdn.invalidateTags(cdnTags, { effectId });
}

/**
 * Marks `targets` (`markPage`, `concurrency` at a time), then queues their regenerations
 * when asked: the part of a revalidation a background fan-out batch repeats on its pages.
 */
export async function markTargets(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  targets: readonly Target[],
): Promise<Omit<RevalidationEffect, 'cdn'>> {
  const marked = await mapBounded(targets, deps.fanOutConcurrency ?? 32, (target) =>
    markPage(deps, revalidation, target),
  );
  const heldAt = heldIndexes(deps, revalidation, marked);
  const regenerations = revalidation.regenerate
    ? await queueRegenerations(deps, revalidation, targets, marked, heldAt)
    : 0;
  const pages = marked.filter((found) => found !== undefined).length;
  return { pages, regenerations, held: heldOf(targets, marked, heldAt) };
}

/**
 * Marked pages still held: a hold outlasts a `stale` mark (the page stays a HIT until the hold
 * ends or is released), while `expire` deletes META, hold and all.
 */
function heldIndexes(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  marked: readonly (CacheMeta | undefined)[],
): Set<number> {
  const held = new Set<number>();
  if (revalidation.mode !== RevalidationMode.Stale) return held;
  const now = epochSeconds(deps.clock);
  marked.forEach((meta, index) => {
    if (isHeld(meta, now)) held.add(index);
  });
  return held;
}

/** The held pages as the receipt reports them: counted, the first few listed by cache key. */
function heldOf(
  targets: readonly Target[],
  marked: readonly (CacheMeta | undefined)[],
  heldAt: ReadonlySet<number>,
): HeldPages {
  const pages = [...heldAt].slice(0, HELD_PAGES_LISTED).map((index) => ({
    key: targets[index]?.key?.key ?? marked[index]?.cacheKey ?? targets[index]?.pk ?? '',
    holdUntil: marked[index]?.holdUntil ?? 0,
  }));
  return { count: heldAt.size, pages };
}

/**
 * The pages named by path, then every page indexed under a tag, each once. A path's variants
 * (`page/variants.ts`) are indexed under its variant tag, so a path revalidation reads that too.
 * `tags: false` leaves the tags to a background fan-out (`fan-out.ts`).
 */
export async function pagesToMark(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  options: { readonly tags?: boolean } = {},
): Promise<Target[]> {
  const targets = new Map<string, Target>();
  for (const key of revalidation.keys) targets.set(key.pk, { pk: key.pk, key, foundUnder: [] });
  const tags = options.tags === false ? [] : revalidation.tags;
  for (const tag of [...tags, ...variantTagsOf(revalidation)]) {
    let cursor: string | undefined;
    do {
      const page = await deps.tagIndex.pages(revalidation.tenant, tag, cursor);
      for (const pk of page.pks) {
        const target = targets.get(pk) ?? { pk, foundUnder: [] };
        target.foundUnder.push(tag);
        targets.set(pk, target);
      }
      cursor = page.next;
    } while (cursor !== undefined);
  }
  return [...targets.values()];
}

/**
 * One write when the page has META (the mark, or the delete, refuses a render in flight: its
 * publish is conditioned on the META it read). Without META, a first render in flight read
 * none, so its LOCK is marked instead, and META tried once more: that render may have published
 * between the first try and the LOCK mark. @returns META as it was, if any
 */
async function markPage(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  target: Target,
): Promise<CacheMeta | undefined> {
  // A page named by path loses its hit-for-pass mark, and so does each of its variants (found
  // under its variant tag): the caller says it changed (issues 21, 33).
  // Each write may meet a publish's ongoing transaction on its row: retried (issue 33, seed 33003).
  const variantTags = variantTagsOf(revalidation);
  if (target.key !== undefined || target.foundUnder.some((tag) => variantTags.includes(tag))) {
    await retryConflicts(deps, () => deps.marks.clearPass(target.pk));
  }
  const markMeta = () =>
    retryConflicts(deps, () =>
      revalidation.mode === RevalidationMode.Expire
        ? deps.marks.expire(target.pk)
        : deps.marks.markStale(target.pk, {
            effectId: revalidation.effectId,
            now: epochSeconds(deps.clock),
          }),
    );
  let meta = await markMeta();
  if (meta === undefined) {
    await retryConflicts(deps, () => deps.marks.markLock(target.pk, revalidation.effectId));
    meta = await markMeta();
  }
  await unindexGone(deps, revalidation, target, meta);
  return meta;
}

/**
 * Index rows that no longer name a page under their tag go: those of a page found without META
 * (gone by TTL) or without the tag, and every row of a page this revalidation expired. So a gone
 * page costs one mark, not one on every revalidation of its tags. Guarded (`TagRowRemoval`): a
 * page a render is publishing keeps its rows.
 */
async function unindexGone(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  target: Target,
  meta: CacheMeta | undefined,
): Promise<void> {
  const expired = revalidation.mode === RevalidationMode.Expire ? (meta?.tags ?? []) : [];
  const stray = target.foundUnder.filter((tag) => !(meta?.tags ?? []).includes(tag));
  const gone = [...new Set([...expired, ...stray])];
  if (gone.length > 0) await deps.tagIndex.remove(revalidation.tenant, target.pk, gone);
}

/**
 * Queues a regeneration of each page now, as an explicit intent (no observed generation: it is
 * not held back by a failure backoff) except for a held page, in batches (one call per ten pages, not one per page). A
 * page is known by the path that named it or, found by tag, by the cache key its META recorded.
 */
async function queueRegenerations(
  deps: RevalidationDeps,
  revalidation: Revalidation,
  targets: readonly Target[],
  marked: readonly (CacheMeta | undefined)[],
  heldAt: ReadonlySet<number>,
): Promise<number> {
  const intents: QueuedIntent[] = [];
  for (const [index, target] of targets.entries()) {
    if (heldAt.has(index)) continue; // the worker would only answer `held`
    const address = target.key ?? addressOf(marked[index]);
    if (address === undefined) continue;
    const page = { tenant: revalidation.tenant, ...address, pk: target.pk };
    intents.push(
      regenerationIntent(page, deps.deployId, {
        kind: 'revalidation',
        effectId: revalidation.effectId,
        // The first pages, up to the bound, are purged from the CDN once regenerated.
        purge: intents.length < (revalidation.softPurgeLimit ?? 0),
      }),
    );
  }
  await deps.queue.enqueueBatch(intents);
  return intents.length;
}

/** Path, query and variant of a page from the cache key its META recorded (`cache_key`). */
function addressOf(
  meta: CacheMeta | undefined,
): { path: string; query: string; variant?: string } | undefined {
  if (meta?.cacheKey === undefined) return undefined;
  const [pageKey, variant] = splitOnce(meta.cacheKey, VARIANT_SEPARATOR);
  const [path, query] = splitOnce(pageKey, '?');
  return { path, query: query ?? '', ...(variant === undefined ? {} : { variant }) };
}

const splitOnce = (text: string, separator: string): [string, string | undefined] => {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
};

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
