/**
 * The idempotent part of an intent: regenerate, and say how its REQ# row ends (the outcome
 * `runOnce` records). A failed render of a page with a last good generation is recorded on its
 * META (the backoff), and the intent ends there.
 */
import type { CacheKey, CacheMeta } from '../page/model.js';
import { DEFAULT_FAILURE_POLICY, nextFailure } from '../backoff.js';
import { epochSeconds } from '../clock.js';
import { Decision } from '../decision.js';
import {
  ErrorKind,
  failureOf,
  RenderRetryableError,
  RETRIES_EXHAUSTED,
  type Failure,
} from '../errors.js';
import type { Need } from '../page/freshness.js';
import { Settlement, type IdempotentCall, type RecordedOutcome } from '../idempotency.js';
import { attemptTtl, DEFAULT_RETENTION } from '../retention.js';
import type { WorkerDeps } from './deps.js';
import { regenerate } from '../regenerate/regenerate.js';
import type { RegenerateOutcome } from '../page/regeneration.js';

/** What the worker records for an intent: a decision it logs, with the REQ# settlement. */
export type WorkerOutcome = RecordedOutcome & { readonly decision: Decision };

/**
 * The idempotent part: regenerate, and say how its REQ# row ends. A failed render of a page
 * with a last good generation is recorded on its META (the backoff) and the intent ends there:
 * a terminal refusal FAILED, with its reason, for people (and the DLQ); a retryable one
 * COMPLETED as `render-failed`, retried by the next stale hit once the backoff allows. Anything
 * else thrown releases the claim, and SQS retries the message, except on its last receive: the
 * intent is then dead-lettered, and its row FAILED with the reason, never left STARTED.
 */
export async function settleIntent(
  deps: WorkerDeps,
  call: IdempotentCall,
  cacheKey: CacheKey,
  need: Need,
  meta: CacheMeta | undefined,
  lastReceive: boolean,
): Promise<WorkerOutcome> {
  let outcome: RegenerateOutcome;
  try {
    outcome = await regenerate(deps, {
      cacheKey,
      need,
      owner: deps.owner,
      seal: {
        idempotencyKey: call.key,
        ttl: epochSeconds(deps.clock) + deps.idempotency.config.expiresAfterSeconds,
      },
    });
  } catch (error) {
    const failure = failureOf(error);
    const deferred = error instanceof RenderRetryableError && meta !== undefined;
    if (failure.kind === ErrorKind.Retryable && !deferred && lastReceive) {
      return {
        settlement: Settlement.Failed,
        decision: Decision.Retry,
        error: exhausted(call, failure),
      };
    }
    if (failure.kind !== ErrorKind.Terminal && !deferred) throw error;
    const failures = meta === undefined ? undefined : await recordFailure(deps, meta, failure);
    if (failure.kind === ErrorKind.Terminal) {
      return {
        settlement: Settlement.Failed,
        decision: Decision.Refused,
        error: reasonOf(failure),
        failures,
      };
    }
    return {
      settlement: Settlement.Completed,
      decision: Decision.RenderFailed,
      error: reasonOf(failure),
      failures,
    };
  }
  switch (outcome.decision) {
    case 'new':
      return {
        settlement: Settlement.SealedByPublish,
        decision: outcome.decision,
        s3Key: outcome.meta.s3Key,
        generatedAt: outcome.meta.generatedAt,
      };
    case 'duplicate':
      // Another delivery of this intent published and sealed REQ# first: leave its row as it is.
      return { settlement: Settlement.SealedByPublish, decision: outcome.decision };
    default:
      return { settlement: Settlement.Completed, decision: outcome.decision };
  }
}

/** A failure's code and message, as a dead letter and a FAILED row carry them. */
export const reasonOf = (failure: Failure) => ({ code: failure.code, message: failure.message });

/** The reason an intent is given up on after its last receive. */
const exhausted = (call: { readonly key: string }, failure: Failure) => ({
  code: RETRIES_EXHAUSTED,
  message: `gave up on ${call.key} after its last receive: ${failure.message}`,
});

/**
 * One more failure on the page's META, if META still holds the generation this delivery saw;
 * the count it returns says whether the page is now broken.
 */
async function recordFailure(
  deps: WorkerDeps,
  meta: CacheMeta,
  failure: Failure,
): Promise<number | undefined> {
  const policy = deps.failurePolicy ?? DEFAULT_FAILURE_POLICY;
  const now = epochSeconds(deps.clock);
  const record = nextFailure(meta.failures, now, `${failure.code}: ${failure.message}`, policy);
  const written = await deps.cacheTable.recordFailure({
    pk: meta.pk,
    observedGeneratedAt: meta.generatedAt,
    previousCount: meta.failures?.count ?? 0,
    record,
    ttl: attemptTtl(meta.ttl, now, meta.statusCode, deps.retention ?? DEFAULT_RETENTION),
    broken: record.count >= policy.brokenAfter,
  });
  return written ? record.count : undefined;
}
