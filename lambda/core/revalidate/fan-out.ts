/**
 * Revalidation in the background. `acceptRevalidation` answers after a fixed number of calls
 * whatever the page count: tag times, the pages named by path, one in-progress entry per tag on
 * every shard (the origin honours those at once, `page/in-progress.ts`), one progress row and one
 * fan-out message per tag. `markBatch` then marks a tag's pages a batch at a time off the queue,
 * resumable from the progress row's cursor (`resumeStalledFanOuts`, run by the sweeper).
 */
import { cdnKeyTagOf, cdnTagOf } from '../page/cache-tags.js';
import { retryConflicts } from '../conflict-retry.js';
import type { CdnPurge, RevalidationsInProgress, TagPageCount } from '../page/ports.js';
import type {
  FanOutProgress,
  FanOutProgressRows,
  FanOutQueue,
  FanOutStarts,
  RevalidationStatus,
  RevalidationStatuses,
} from './ports.js';
import { acceptedStatus, doneStatus, markingStatus } from './revalidation-status.js';
import { fanOutMessage, type FanOutMessage } from './fan-out-message.js';
import { inProgressKey } from '../page/in-progress.js';
import {
  defersPurge,
  sendDeadline,
  sendTagDeadline,
  softPurgesLeft,
  statusDeadlineOf,
  withSoftPurges,
} from './soft-purge.js';
import type { DeferredPurge, Revalidation, RevalidationEffect } from './model.js';
import { markTargets, pagesToMark, variantTagsOf, type RevalidationDeps } from './revalidation.js';

export interface FanOutDeps extends RevalidationDeps {
  readonly inProgress: RevalidationsInProgress;
  /** Shards of the in-progress rows: each entry is written to all of them. */
  readonly shards: number;
  readonly progress: FanOutProgressRows;
  readonly fanOutQueue: FanOutQueue;
  readonly statuses: RevalidationStatuses;
  /** Tag-index rows one fan-out step marks. */
  readonly batchSize: number;
  /** How long origins reuse an in-progress read: the 202 waits this long after the writes. */
  readonly inProgressCacheMs: number;
}

/** What accepting a revalidation needs beyond its steps: how its fan-outs start. */
export interface AcceptDeps extends FanOutDeps {
  readonly starts: FanOutStarts;
}

/**
 * What the 202 reports: pages marked before it, the tags still marking after it, and the pages
 * the revalidation will have marked in all (`expectedPages`, see `expectedPages`).
 */
export interface AcceptedRevalidation extends RevalidationEffect {
  readonly marking: { readonly tags: number; readonly expected: TagPageCount };
}

/** Index rows read per tag for the 202's count (about 100 KB): exact up to it, estimated past. */
export const COUNTED_PAGES_PER_TAG = 1_000;

/**
 * Accepts a revalidation (see the module comment). Write order: per tag its time, then whether
 * its index holds a page at all (a tag with none costs that one write: a render that indexes it
 * later compares its start with that time, `indexGainedTags`); the path pages; then the start
 * of the tags' fan-outs (`startFanOuts`: the status, the in-progress entries and the progress
 * rows, all or nothing) BEFORE their first steps (a step finds its own entry), the wait for
 * origins' cached reads to run out, and data caches' reads of the tag times (`tag-times.ts`),
 * even for a tag without pages (the pages are counted meanwhile), then the CDN purge (an
 * edge refetch meets an origin that honours the entries). Without tags to fan out, the status
 * is written once, done. So a failed accept leaves no status `marking`, and a crash anywhere
 * is redone by the same effect, retried by its Idempotency-Key: every write repeats
 * harmlessly, and a fan-out it started is not started twice.
 */
export async function acceptRevalidation(
  deps: AcceptDeps,
  revalidation: Revalidation,
): Promise<AcceptedRevalidation> {
  const atMs = deps.clock.now();
  const accepted = {
    ...acceptedStatus(revalidation, atMs),
    ...statusDeadlineOf(deps, revalidation),
  };
  const live = await tagsWithPages(deps, revalidation, atMs);
  const paths = await markTargets(
    deps,
    withSoftPurges(deps, revalidation),
    await pagesToMark(deps, revalidation, { tags: false }),
  );
  if (live.length === 0) {
    const effect = { ...paths, cdn: { status: 'not-configured' } as const };
    await deps.statuses.put(doneStatus(accepted, effect, deps.clock.now()));
  } else {
    await startFanOuts(deps, revalidation, live, markingStatus(accepted, paths, live.length));
  }
  // With entries written, the wait; the tags' pages are counted (and kept) meanwhile. A tag
  // without pages waits too: data caches (facetheory-isr/next) reuse tag-time reads as long.
  const [expected] = await Promise.all([
    expectedPages(deps, { ...revalidation, tags: live }, paths.pages),
    revalidation.tags.length === 0 ? undefined : deps.clock.sleep(deps.inProgressCacheMs),
  ]);
  const cdn = await purgeAccepted(deps, revalidation, live);
  return { ...paths, cdn, marking: { tags: live.length, expected } };
}

/**
 * Records each tag's revalidation time, then reads (strongly consistent) whether its index holds
 * a page; and records the time of each path's variant tag, as `revalidate` does (a variant's
 * first render in flight is in no index yet: publishing, it compares its start with that time).
 * @returns the tags with pages, which are the ones to fan out over
 */
async function tagsWithPages(
  deps: FanOutDeps,
  revalidation: Revalidation,
  atMs: number,
): Promise<string[]> {
  const { tenant, effectId } = revalidation;
  await Promise.all(
    variantTagsOf(revalidation).map((tag) =>
      deps.tagIndex.recordRevalidation(tenant, tag, { effectId, atMs }),
    ),
  );
  const found = await Promise.all(
    revalidation.tags.map(async (tag) => {
      await deps.tagIndex.recordRevalidation(tenant, tag, { effectId, atMs });
      const first = await deps.tagIndex.pages(tenant, tag, undefined, 1);
      return first.pks.length > 0;
    }),
  );
  return revalidation.tags.filter((_, index) => found[index]);
}

/**
 * The pages a revalidation will have marked: those of its paths, and what its tags' index holds
 * (each tag counted in one Query, exactly up to `COUNTED_PAGES_PER_TAG`, estimated past it),
 * recorded on the status so its progress can be followed against them. A page under two of
 * the tags counts twice; a page published under a tag after the count is marked but not counted.
 */
async function expectedPages(
  deps: FanOutDeps,
  revalidation: Revalidation,
  pathPages: number,
): Promise<TagPageCount> {
  const { tenant, tags, effectId } = revalidation;
  if (tags.length === 0) return { count: pathPages, exact: true };
  const counts = await Promise.all(
    tags.map((tag) => deps.tagIndex.countPages(tenant, tag, COUNTED_PAGES_PER_TAG)),
  );
  const expected = {
    count: pathPages + counts.reduce((sum, count) => sum + count.count, 0),
    exact: counts.every((count) => count.exact),
  };
  // Its first step's transaction may be counting on the same row: a conflict is retried.
  await retryConflicts(deps, () => deps.statuses.expect(effectId, expected));
  return expected;
}

/**
 * The CDN purge of an accepted revalidation: its tags and paths at once; or, with soft purges
 * (`soft-purge.ts`), the deadline purge of its paths and of its tags without pages (each tag
 * with pages has its own, sent by its fan-out's last batch).
 */
async function purgeAccepted(
  deps: FanOutDeps,
  revalidation: Revalidation,
  live: readonly string[],
): Promise<CdnPurge | DeferredPurge> {
  const { tenant, tags, effectId } = revalidation;
  const keyTags = revalidation.keys.map(cdnKeyTagOf);
  if (defersPurge(deps, revalidation)) {
    const idle = tags.filter((tag) => !live.includes(tag)).map((tag) => cdnTagOf(tenant, tag));
    return sendDeadline(deps, effectId, [...idle, ...keyTags], { final: live.length === 0 });
  }
  // The effect id makes a retried revalidation's purge the same CloudFront invalidation.
  return deps.cdn.invalidateTags([...tags.map((tag) => cdnTagOf(tenant, tag)), ...keyTags], {
    effectId,
  });
}

/**
 * The tags' fan-outs start (`FanOutStarts`: the status counting them, each tag's entry on every
 * shard, its progress row), a conflict with another writer tried again after a jittered wait;
 * then every tag's first step is queued, also of a fan-out an earlier attempt of this effect
 * started (a copy of a step that moved on is a duplicate, and queues the step it is at).
 */
async function startFanOuts(
  deps: AcceptDeps,
  revalidation: Revalidation,
  live: readonly string[],
  status: RevalidationStatus,
): Promise<void> {
  const { tenant, effectId, mode, regenerate } = revalidation;
  const atMs = status.acceptedAtMs;
  const fanOuts = live.map((tag): FanOutProgress => ({
    tenant,
    effectId,
    mode,
    tag,
    regenerate,
    cursor: '',
    updatedAtMs: atMs,
    marked: 0,
  }));
  await retryConflicts(deps, () =>
    deps.starts.start({ status, shards: deps.shards, fanOuts, atMs }),
  );
  await Promise.all(fanOuts.map((progress) => send(deps, fanOutMessage(progress, ''))));
}

const send = (deps: Pick<FanOutDeps, 'fanOutQueue'>, queued: ReturnType<typeof fanOutMessage>) =>
  deps.fanOutQueue.sendFanOut(queued.body, queued);

/** What one step did, for the worker's log line. */
export type FanOutStep =
  | { readonly outcome: 'marked' | 'done'; readonly marked: number; readonly next?: string }
  | { readonly outcome: 'superseded' | 'duplicate'; readonly marked: 0 };

/**
 * One fan-out step. It reads, at once, the in-progress entry, its progress row, its batch of the
 * tag index (a duplicate wastes that Query page) and, with soft purges, the status, then stops
 * when the progress row is no longer at this step's cursor (a duplicate: if a copy moved it on
 * from here and may have died before queuing the next step, that step is queued again) or another effect took the
 * tag over (superseded). Else it marks the batch, moves the cursor on while it is still the one
 * read, counting the batch on the status in the same transaction (of two copies of a step, one
 * wins, and counts once), and queues the next step. After the last batch it deletes its progress
 * row and counts itself done, again in one transaction, then removes its in-progress entries
 * (from every shard at once, only while still its own). A copy that finds the progress row gone
 * while the entries are still its own removes them: the last step, redelivered after a crash
 * between the two. With soft purges, its intents carry the purge flag up to the effect's bound,
 * and the last batch queues the tag's deadline purge before anything else (`soft-purge.ts`).
 */
export async function markBatch(deps: FanOutDeps, message: FanOutMessage): Promise<FanOutStep> {
  const { tenant, effectId, mode, tag, cursor } = message;
  const [state, progress, found, softPurgeLimit] = await Promise.all([
    deps.inProgress.read(tenant, 0),
    deps.progress.get({ tenant, effectId, mode, tag }),
    deps.tagIndex.pages(tenant, tag, cursor || undefined, deps.batchSize),
    softPurgesLeft(deps, message),
  ]);
  const key = inProgressKey(mode, tag);
  const ours = state.get(key)?.effectId === effectId;
  if (progress === undefined) {
    // Finished: maybe by this very step, redelivered after a crash before it removed its entries.
    if (ours)
      await retryConflicts(deps, () => deps.inProgress.end(tenant, deps.shards, key, effectId));
    return { outcome: 'duplicate', marked: 0 };
  }
  if (progress.cursor !== cursor) {
    // A copy moved the cursor on from here: its next step is queued again, in case it died
    // before queuing it (not `found.next`: the batch it marked may have unindexed gone pages).
    if (progress.movedFrom === cursor) await send(deps, fanOutMessage(progress, progress.cursor));
    return { outcome: 'duplicate', marked: 0 };
  }
  if (!ours) {
    const counts = { marked: 0, regenerations: 0 };
    await retryConflicts(deps, () =>
      deps.progress.finish(progress, { from: cursor, counts, atMs: deps.clock.now() }),
    );
    return { outcome: 'superseded', marked: 0 };
  }
  const revalidation: Revalidation = {
    tenant,
    keys: [],
    tags: [tag],
    mode,
    regenerate: message.regenerate,
    effectId,
    softPurgeLimit,
  };
  const targets = found.pks.map((pk) => ({ pk, foundUnder: [tag] }));
  const batch = await markTargets(deps, revalidation, targets);
  const counts = { marked: batch.pages, regenerations: batch.regenerations };
  const atMs = deps.clock.now();
  if (found.next !== undefined) {
    const to = found.next;
    const moved = { from: cursor, to, counts, atMs };
    if (!(await retryConflicts(deps, () => deps.progress.advance(progress, moved)))) {
      return { outcome: 'duplicate', marked: 0 };
    }
    await send(deps, fanOutMessage(progress, to));
    return { outcome: 'marked', marked: batch.pages, next: to };
  }
  await sendTagDeadline(deps, message);
  const last = { from: cursor, counts, atMs };
  if (!(await retryConflicts(deps, () => deps.progress.finish(progress, last)))) {
    return { outcome: 'duplicate', marked: 0 };
  }
  await retryConflicts(deps, () => deps.inProgress.end(tenant, deps.shards, key, effectId));
  return { outcome: 'done', marked: batch.pages };
}

/** What resuming stopped fan-outs needs (the sweeper's wiring gives it, `resumeStalledFanOuts`). */
export interface FanOutSweepDeps extends Pick<FanOutDeps, 'progress' | 'fanOutQueue' | 'clock'> {
  /** A fan-out not advanced for this long has stopped. */
  readonly stalledAfterMs: number;
  /** Fan-outs resent per run at most. */
  readonly limit: number;
}

/**
 * The sweeper's part: resends the step of each fan-out not advanced for `stalledAfterMs`, from
 * its stored cursor (a crashed or lost step). A fan-out still running loses nothing: of the two
 * copies of its step, one wins the cursor. @returns the fan-outs resent
 */
export async function resumeStalledFanOuts(
  deps: Pick<FanOutDeps, 'progress' | 'fanOutQueue' | 'clock'>,
  options: { readonly stalledAfterMs: number; readonly limit: number },
): Promise<FanOutProgress[]> {
  const now = deps.clock.now();
  const stalled = await deps.progress.stalled(now - options.stalledAfterMs, options.limit);
  for (const progress of stalled) {
    await send(deps, fanOutMessage(progress, progress.cursor, `resend@${now}`));
  }
  return stalled;
}
