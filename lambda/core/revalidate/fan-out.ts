/**
 * Revalidation in the background. `acceptRevalidation` answers after a fixed number of calls
 * whatever the page count: tag times, the pages named by path, one in-progress entry per tag on
 * every shard (the origin honours those at once, `in-progress.ts`), one progress row and one
 * fan-out message per tag. `markBatch` then marks a tag's pages a batch at a time off the queue,
 * resumable from the progress row's cursor (`resumeStalledFanOuts`, run by the sweeper).
 */
import { cdnKeyTagOf, cdnTagOf } from '../cache-tags.js';
import type {
  FanOutProgress,
  FanOutProgressRows,
  FanOutQueue,
  RevalidationsInProgress,
  RevalidationStatuses,
} from '../ports.js';
import { acceptedStatus, doneStatus } from './revalidation-status.js';
import { fanOutMessage, type FanOutMessage } from './fan-out-message.js';
import { inProgressKey } from './in-progress.js';
import {
  markTargets,
  pagesToMark,
  type Revalidation,
  type RevalidationDeps,
  type RevalidationEffect,
} from './revalidation.js';

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

/** What the 202 reports: pages marked before it, and the tags still marking after it. */
export interface AcceptedRevalidation extends RevalidationEffect {
  readonly marking: { readonly tags: number };
}

/**
 * Accepts a revalidation (see the module comment). Write order: the status, tag times, path
 * pages, then per tag its in-progress entries BEFORE its progress row and message (a step finds
 * its own entry), then the wait for origins' cached reads to run out, then the CDN purge (an
 * edge refetch meets an origin that honours the entries). A crash anywhere: the same effect is
 * retried by its Idempotency-Key and every write repeats harmlessly.
 */
export async function acceptRevalidation(
  deps: FanOutDeps,
  revalidation: Revalidation,
): Promise<AcceptedRevalidation> {
  const { tenant, tags, effectId } = revalidation;
  const atMs = deps.clock.now();
  const accepted = { ...acceptedStatus(revalidation, atMs), fanOuts: tags.length };
  await deps.statuses.put(accepted);
  await Promise.all(
    tags.map((tag) => deps.tagIndex.recordRevalidation(tenant, tag, { effectId, atMs })),
  );
  const paths = await markTargets(
    deps,
    revalidation,
    await pagesToMark(deps, revalidation, { tags: false }),
  );
  await Promise.all(tags.map((tag) => startFanOut(deps, revalidation, tag, atMs)));
  const cdn = { status: 'not-configured' } as const;
  const effect = { ...paths, cdn };
  if (tags.length === 0) await deps.statuses.put(doneStatus(accepted, effect, deps.clock.now()));
  else {
    const counts = { marked: paths.pages, regenerations: paths.regenerations };
    await deps.statuses.addMarked(effectId, counts);
  }
  await deps.clock.sleep(deps.inProgressCacheMs);
  // The effect id makes a retried revalidation's purge the same CloudFront invalidation.
  const purged = await deps.cdn.invalidateTags(
    [...tags.map((tag) => cdnTagOf(tenant, tag)), ...revalidation.keys.map(cdnKeyTagOf)],
    { effectId },
  );
  return { ...paths, cdn: purged, marking: { tags: tags.length } };
}

/** One tag's entry on every shard (at once), its progress row, then its first step. */
async function startFanOut(
  deps: FanOutDeps,
  revalidation: Revalidation,
  tag: string,
  atMs: number,
): Promise<void> {
  const { tenant, effectId, mode, regenerate } = revalidation;
  const key = inProgressKey(mode, tag);
  await deps.inProgress.begin(tenant, deps.shards, { key, atMs, effectId });
  const progress = {
    tenant,
    effectId,
    mode,
    tag,
    regenerate,
    cursor: '',
    updatedAtMs: atMs,
    marked: 0,
  };
  await deps.progress.start(progress);
  await send(deps, fanOutMessage(progress, ''));
}

const send = (deps: Pick<FanOutDeps, 'fanOutQueue'>, queued: ReturnType<typeof fanOutMessage>) =>
  deps.fanOutQueue.sendFanOut(queued.body, queued);

/** What one step did, for the worker's log line. */
export type FanOutStep =
  | { readonly outcome: 'marked' | 'done'; readonly marked: number; readonly next?: string }
  | { readonly outcome: 'superseded' | 'duplicate'; readonly marked: 0 };

/**
 * One fan-out step: stops when another effect took the tag over (superseded: it wrote the entry
 * after this one did, so its fan-out marks every page after this one began) or the progress
 * row is no longer at this step's cursor (a duplicate); else marks the next batch, moves the
 * cursor on (conditioned on the one read: of two copies of a step, one wins), counts the batch
 * on the status, and queues the next step; after the last batch it removes its in-progress
 * entries (from every shard at once, only while still its own), deletes its progress row and
 * counts itself done. A step that finds no progress row counts the fan-out done again (which
 * counts once): a last step redelivered after failing past its row's deletion ends its status.
 */
export async function markBatch(deps: FanOutDeps, message: FanOutMessage): Promise<FanOutStep> {
  const { tenant, effectId, mode, tag, cursor } = message;
  const key = inProgressKey(mode, tag);
  const entry = (await deps.inProgress.read(tenant, 0)).get(key);
  const progress = await deps.progress.get({ tenant, effectId, mode, tag });
  if (progress === undefined) {
    // Finished: maybe by this very step, redelivered after a crash before it counted itself.
    await deps.statuses.finishFanOut(effectId, key, deps.clock.now());
    return { outcome: 'duplicate', marked: 0 };
  }
  if (progress.cursor !== cursor) return { outcome: 'duplicate', marked: 0 };
  if (entry?.effectId !== effectId) {
    await deps.progress.finish(progress, cursor);
    await deps.statuses.finishFanOut(effectId, key, deps.clock.now());
    return { outcome: 'superseded', marked: 0 };
  }
  const found = await deps.tagIndex.pages(tenant, tag, cursor || undefined, deps.batchSize);
  const revalidation: Revalidation = {
    tenant,
    keys: [],
    tags: [tag],
    mode,
    regenerate: message.regenerate,
    effectId,
  };
  const targets = found.pks.map((pk) => ({ pk, foundUnder: [tag] }));
  const batch = await markTargets(deps, revalidation, targets);
  const counts = { marked: batch.pages, regenerations: batch.regenerations };
  const atMs = deps.clock.now();
  if (found.next !== undefined) {
    const moved = { from: cursor, to: found.next, marked: batch.pages, atMs };
    if (!(await deps.progress.advance(progress, moved))) return { outcome: 'duplicate', marked: 0 };
    await deps.statuses.addMarked(effectId, counts);
    await send(deps, fanOutMessage(progress, found.next));
    return { outcome: 'marked', marked: batch.pages, next: found.next };
  }
  await deps.inProgress.end(tenant, deps.shards, key, effectId);
  if (!(await deps.progress.finish(progress, cursor))) return { outcome: 'duplicate', marked: 0 };
  await deps.statuses.addMarked(effectId, counts);
  await deps.statuses.finishFanOut(effectId, key, atMs);
  return { outcome: 'done', marked: batch.pages };
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
