/**
 * The sweeper's use case that flushes the CDN purges recorded as pending (`CdnPurge` 'pending'),
 * oldest first, each under its own identity (see `core/cdn-purge.ts`).
 */
import type { Clock } from '../clock.js';
import { CdnPurgeRejectedError } from '../errors.js';
import type { PendingPurges, PendingPurgeSubmitter } from './ports.js';

export interface RetryPendingPurgesDeps {
  readonly pending: PendingPurges;
  readonly cdn: PendingPurgeSubmitter;
  readonly clock: Clock;
  /** Pending purges tried per run, oldest first. @default 50 */
  readonly limit?: number | undefined;
}

/** What one sweep of the pending purges did. */
export interface PendingPurgeSweep {
  readonly submitted: readonly { readonly purgeId: string; readonly invalidationId: string }[];
  /** Still pending: throttled again, or not tried once the CDN was saturated. */
  readonly stillPending: number;
  readonly rejected: readonly { readonly purgeId: string; readonly reason: string }[];
}

/**
 * Flushes pending purges, oldest first, each once under its own identity (a scheduled sweeper
 * calls it). A purge is forgotten only once the CDN accepted it. When the CDN throttles one, the
 * sweep stops: the distribution is saturated and the rest would be throttled too. A refused one
 * is set aside (with the reason) for an operator and the sweep goes on: it leaves the pending
 * list, so the next run starts with newer purges instead of the same refusals.
 */
export async function retryPendingPurges(deps: RetryPendingPurgesDeps): Promise<PendingPurgeSweep> {
  const purges = await deps.pending.oldest(deps.limit ?? 50);
  const submitted: { purgeId: string; invalidationId: string }[] = [];
  const rejected: { purgeId: string; reason: string }[] = [];
  for (const [index, purge] of purges.entries()) {
    let attempt;
    try {
      attempt = await deps.cdn.resubmit(purge);
    } catch (error) {
      if (!(error instanceof CdnPurgeRejectedError)) throw error;
      rejected.push({ purgeId: purge.id, reason: error.message });
      await deps.pending.refuse(purge, { reason: error.message, at: deps.clock.now() });
      continue;
    }
    if (attempt.status === 'submitted') {
      await deps.pending.remove(purge);
      submitted.push({ purgeId: purge.id, invalidationId: attempt.invalidationId });
      continue;
    }
    await deps.pending.recordAttempt(purge, { reason: attempt.reason, at: deps.clock.now() });
    return { submitted, rejected, stillPending: purges.length - index };
  }
  return { submitted, rejected, stillPending: 0 };
}
