/**
 * Soft purges: with `regenerate: true` (mode `stale`), the CDN keeps a page's old copy until its
 * new generation is published, and then purges that page alone, so the edge goes straight from
 * the old page to the new one (purged at once, it would fetch the old body again, marked STALE,
 * and only get the new one a regeneration later). The three rules, each written once here:
 * - the flag: an effect's first `maxPagesPerEffect` regeneration intents carry `purge` (each
 *   soft purge is one invalidation item: $0.005 past CloudFront's 1,000 free a month);
 * - the worker's send: a flagged intent that ends with its page's live generation published
 *   after the mark (`new`, `duplicate`, `fresh`, `superseded`) sends the page's key-tag purge
 *   BEFORE it is acknowledged, so a crash in between is redone by the redelivery;
 * - the deadline: what the revalidation would have purged at once (its tags, its paths' key
 *   tags) is queued `deadlineSeconds` later, so a page whose regeneration failed, was held, or
 *   came past the bound is purged anyway. An `expire` (a takedown) is never deferred.
 */
import { cdnTagOf } from '../page/cache-tags.js';
import type { CacheKey } from '../page/model.js';
import type { Clock } from '../clock.js';
import { Decision, type Disposition } from '../decision.js';
import { SoftPurgeNotQueuedError } from '../errors.js';
import type { RegenerationIntent } from '../page/intent.js';
import type { PurgeQueue, RevalidationStatuses } from './ports.js';
import { deadlinePurgesOf, softPurgeOf } from './purge-message.js';
import type { DeferredPurge, Revalidation } from './model.js';

export interface SoftPurgeDeps {
  readonly queue: PurgeQueue;
  /** Seconds until the deadline purge (SQS DelaySeconds, at most 900). */
  readonly deadlineSeconds: number;
  /** Soft purges per effect at most; past it, pages wait for the deadline's purge. */
  readonly maxPagesPerEffect: number;
}

/**
 * A deferred purge as a receipt and a status say it: each page is purged once its new
 * generation is published, and whatever is left at the deadline (`deadline_at`: null while tags
 * are still marking, each tag's deadline counting from the end of its marking).
 */
export const deferredJson = (deadlineSeconds: number, deadlineAtMs: number | undefined) => ({
  status: 'deferred',
  deadline_seconds: deadlineSeconds,
  deadline_at: deadlineAtMs === undefined ? null : new Date(deadlineAtMs).toISOString(),
});

type Deferring = { readonly softPurge?: SoftPurgeDeps | undefined };

/** Whether this revalidation's CDN purge waits for its pages (and the deadline). */
export const defersPurge = (
  deps: Deferring,
  revalidation: Pick<Revalidation, 'regenerate' | 'mode'>,
): deps is { readonly softPurge: SoftPurgeDeps } =>
  deps.softPurge !== undefined && revalidation.regenerate && revalidation.mode === 'stale';

/** The revalidation with its soft purges: the bound whole (pages marked before any fan-out). */
export const withSoftPurges = (deps: Deferring, revalidation: Revalidation): Revalidation =>
  defersPurge(deps, revalidation)
    ? { ...revalidation, softPurgeLimit: deps.softPurge.maxPagesPerEffect }
    : revalidation;

/** What the status row keeps of a deferred purge (absent when the purge was made at once). */
export const statusDeadlineOf = (
  deps: Deferring,
  revalidation: Pick<Revalidation, 'regenerate' | 'mode'>,
): { readonly purgeDeadlineSeconds?: number } =>
  defersPurge(deps, revalidation) ? { purgeDeadlineSeconds: deps.softPurge.deadlineSeconds } : {};

/**
 * Queues the deadline purge of `tags` (CDN tags). `final`: no fan-out of this effect sends a
 * deadline later, so this one is the last and the receipt can name its time.
 */
export async function sendDeadline(
  deps: { readonly softPurge: SoftPurgeDeps; readonly clock: Clock },
  effectId: string,
  tags: readonly string[],
  options: { readonly final: boolean },
): Promise<DeferredPurge> {
  const { deadlineSeconds } = deps.softPurge;
  const atMs = deps.clock.now();
  if (tags.length > 0)
    await deps.softPurge.queue.send(deadlinePurgesOf(effectId, tags, deadlineSeconds));
  return {
    status: 'deferred',
    deadlineSeconds,
    deadlineAtMs: options.final ? atMs + deadlineSeconds * 1000 : undefined,
  };
}

/**
 * A tag's deadline purge, sent by its fan-out's last batch before the fan-out is counted done
 * (a crash after the send repeats it harmlessly: one effect and one tag make one CDN identity).
 */
export async function sendTagDeadline(
  deps: Deferring & { readonly clock: Clock },
  step: Pick<Revalidation, 'regenerate' | 'mode' | 'effectId'> & {
    readonly tenant?: string | undefined;
    readonly tag: string;
  },
): Promise<void> {
  if (!defersPurge(deps, step)) return;
  await sendDeadline(deps, step.effectId, [cdnTagOf(step.tenant, step.tag)], { final: false });
}

/**
 * How many of a fan-out step's pages may still be soft-purged: the bound less what the effect
 * has marked so far (its status, every tag and path counted). Steps of one effect run side by
 * side, so it may be passed by at most one batch per tag marking at the same time.
 */
export async function softPurgesLeft(
  deps: Deferring & { readonly statuses: RevalidationStatuses },
  step: Pick<Revalidation, 'regenerate' | 'mode' | 'effectId'>,
): Promise<number> {
  if (!defersPurge(deps, step)) return 0;
  const status = await deps.statuses.get(step.effectId);
  return Math.max(0, deps.softPurge.maxPagesPerEffect - (status?.marked ?? 0));
}

/** Decisions that leave the page's live generation published after the intent's mark. */
export const SOFT_PURGE_DECISIONS: ReadonlySet<string> = new Set<string>([
  Decision.New,
  Decision.Duplicate,
  Decision.Fresh,
  Decision.Superseded,
]);

/** An intent as the worker settled it: what the soft purge is decided on. */
export interface SettledIntent {
  readonly intent: RegenerationIntent;
  readonly cacheKey: Pick<CacheKey, 'tenant' | 'hash' | 'pageHash'>;
  readonly disposition: Disposition;
  /** What ended the intent: the decision made now, or the one a replay recorded. */
  readonly decided: string;
}

/**
 * The worker's part: a flagged intent whose page is published sends its soft purge before it is
 * acknowledged. Not for `held`, a failure or `lease-held`: the deadline covers those. Without a
 * purge queue the deadline alone purges the page.
 * @throws SoftPurgeNotQueuedError (retryable) when the send failed: the intent stays
 * unacknowledged, and is dead-lettered on its last receive (the deadline then purges the page)
 */
export async function sendSoftPurge(
  deps: { readonly purgeQueue?: PurgeQueue | undefined },
  settled: SettledIntent,
): Promise<Disposition> {
  const { intent, disposition } = settled;
  const purge = intent.purge;
  if (purge === undefined || deps.purgeQueue === undefined || disposition.action !== 'ack') {
    return disposition;
  }
  if (!SOFT_PURGE_DECISIONS.has(settled.decided)) return disposition;
  try {
    await deps.purgeQueue.send([softPurgeOf(purge.effectId, settled.cacheKey)]);
  } catch (error) {
    const what = `the soft purge of ${purge.effectId} was not queued after '${settled.decided}'`;
    throw new SoftPurgeNotQueuedError(`${what}: ${String(error)}`, { cause: error });
  }
  return { ...disposition, detail: { ...disposition.detail, softPurge: purge.effectId } };
}
