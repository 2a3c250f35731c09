import { normaliseCacheKey, type CacheKey, type CacheKeyPolicy } from '../cache-key.js';
import {
  DEFAULT_FAILURE_POLICY,
  nextFailure,
  retryState,
  RetryState,
  type FailurePolicy,
} from '../backoff.js';
import { epochSeconds } from '../clock.js';
import { ErrorKind, failureOf, RenderRetryableError, type Failure } from '../errors.js';
import { isAnswered, isHeld, type Need } from '../freshness.js';
import {
  runOnce,
  Settlement,
  type Idempotency,
  type IdempotentCall,
  type RecordedOutcome,
  type RunOnce,
} from '../idempotency.js';
import { parseIntent, type RegenerationIntent } from '../intent.js';
import type { CacheMeta } from '../ports.js';
import { Decision, regenerate, type RegenerateDeps, type RegenerateOutcome } from './regenerate.js';

/** One SQS record, as the worker needs it. */
export interface WorkerMessage {
  readonly messageId: string;
  readonly body: string;
  /** How many times SQS has handed this message out, this time included. */
  readonly receiveCount: number;
  readonly groupId: string | undefined;
}

export interface WorkerDeps extends RegenerateDeps {
  readonly keyPolicy: CacheKeyPolicy;
  readonly idempotency: Idempotency;
  /** Receives after which a retryable failure is dead-lettered instead of retried. */
  readonly maxReceiveCount: number;
  /** @default DEFAULT_FAILURE_POLICY */
  readonly failurePolicy?: FailurePolicy | undefined;
  readonly owner?: string | undefined;
}

/** What to do with a message: acknowledge it, retry it later, or dead-letter it with a reason. */
export type Disposition = {
  readonly decision: Decision;
  readonly detail?: Record<string, unknown>;
} & (
  | { readonly action: 'ack' }
  | { readonly action: 'retry'; readonly error: unknown }
  | { readonly action: 'dead-letter'; readonly reason: { code: string; message: string } }
);

/** The disposition of one message, with what the log line needs to find it. */
export type MessageReport = Disposition & {
  readonly idempotencyKey: string;
  readonly cacheKeyHash: string | undefined;
};

/**
 * Turns one regeneration intent into at most one published generation. Order (seed 000, as
 * corrected in DESIGN.md): an operator holds the page -> done; META answers it -> done; the page is backing off after failures ->
 * done (unless the intent was explicit); REQ# COMPLETED -> recorded result; STARTED and
 * unexpired -> retry later; different request for the same message ID -> refuse; lease held ->
 * done (the holder regenerates); render; body; one publish transaction that seals REQ#.
 */
export async function processMessage(
  deps: WorkerDeps,
  message: WorkerMessage,
): Promise<MessageReport> {
  let parsed: { intent: RegenerationIntent; cacheKey: CacheKey };
  try {
    parsed = parseMessage(deps, message);
  } catch (error) {
    const report = { idempotencyKey: message.messageId, cacheKeyHash: undefined };
    return { ...report, ...dispositionOfError(error, message, deps.maxReceiveCount) };
  }
  const { intent, cacheKey } = parsed;
  const report = { idempotencyKey: message.messageId, cacheKeyHash: cacheKey.hash };
  const need: Need = { kind: 'intent', observedGeneratedAt: intent.observedGeneratedAt };
  try {
    const meta = await deps.cacheTable.getMeta(cacheKey.pk);
    const now = epochSeconds(deps.clock);
    // An operator's hold stops every intent, explicit ones too, until it ends or is lifted.
    if (isHeld(meta, now)) {
      return {
        ...report,
        decision: Decision.Held,
        action: 'ack',
        detail: { holdUntil: meta?.holdUntil },
      };
    }
    if (isAnswered(meta, now, need)) {
      return { ...report, decision: Decision.Fresh, action: 'ack' };
    }
    // An intent queued by a stale hit waits out the page's backoff; an explicit one does not.
    const state = retryState(meta?.failures, now, deps.failurePolicy ?? DEFAULT_FAILURE_POLICY);
    if (intent.observedGeneratedAt !== undefined && state !== RetryState.Due) {
      const detail = { retryState: state, failures: meta?.failures };
      return { ...report, decision: Decision.Backoff, action: 'ack', detail };
    }
    const call: IdempotentCall = {
      pk: cacheKey.pk,
      key: message.messageId,
      request: {
        tenant: cacheKey.tenant ?? null,
        cacheKey: cacheKey.key,
        deployId: intent.deployId,
      },
    };
    const lastReceive = message.receiveCount >= deps.maxReceiveCount;
    const run = await runOnce(deps.idempotency, call, (claimed) =>
      settle(deps, claimed, cacheKey, need, meta, lastReceive),
    );
    return { ...report, ...dispositionOfRun(deps, run) };
  } catch (error) {
    return { ...report, ...dispositionOfError(error, message, deps.maxReceiveCount) };
  }
}

/** The intent and its cache key. @throws InvalidMessageError, InvalidCacheKeyError (terminal) */
function parseMessage(deps: WorkerDeps, message: WorkerMessage) {
  const intent = parseIntent(message.body);
  const cacheKey = normaliseCacheKey(
    { tenant: intent.tenant, rawPath: intent.path, rawQueryString: intent.query },
    deps.keyPolicy,
  );
  return { intent, cacheKey };
}

/**
 * The idempotent part: regenerate, and say how its REQ# row ends. A failed render of a page
 * with a last good generation is recorded on its META (the backoff) and the intent ends there:
 * a terminal refusal FAILED, with its reason, for people (and the DLQ); a retryable one
 * COMPLETED as `render-failed`, retried by the next stale hit once the backoff allows. Anything
 * else thrown releases the claim, and SQS retries the message, except on its last receive: the
 * intent is then dead-lettered, and its row FAILED with the reason, never left STARTED.
 */
async function settle(
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

/** What the worker records for an intent: a decision it logs, with the REQ# settlement. */
type WorkerOutcome = RecordedOutcome & { readonly decision: Decision };

/** What the message becomes, however its call under the message ID ended. */
function dispositionOfRun(deps: WorkerDeps, run: RunOnce<WorkerOutcome>): Disposition {
  switch (run.status) {
    case 'replayed': {
      const detail = { recorded: run.outcome.decision, s3Key: run.outcome.s3Key };
      return { decision: Decision.Duplicate, action: 'ack', detail };
    }
    case 'conflict': {
      const reason = {
        code: 'idempotency-conflict',
        message: 'this message ID was already used for a different request; nothing was applied',
      };
      return { decision: Decision.Conflict, action: 'dead-letter', reason };
    }
    case 'in-progress':
      return { decision: Decision.InProgress, action: 'retry', error: run.error };
    case 'new': {
      const policy = deps.failurePolicy ?? DEFAULT_FAILURE_POLICY;
      const failures = run.outcome.failures;
      const disposition = dispositionOf(run.outcome);
      return failures !== undefined && failures >= policy.brokenAfter
        ? { ...disposition, detail: { ...disposition.detail, broken: true } }
        : disposition;
    }
  }
}

/** What a call that ran now means for the message. */
function dispositionOf(outcome: WorkerOutcome): Disposition {
  if (outcome.settlement === Settlement.Failed) {
    return {
      decision: outcome.decision,
      action: 'dead-letter',
      reason: outcome.error ?? { code: 'failed', message: 'the regeneration failed for good' },
      detail: { failures: outcome.failures },
    };
  }
  if (outcome.decision === Decision.RenderFailed) {
    return {
      decision: Decision.RenderFailed,
      action: 'ack',
      detail: { error: outcome.error, failures: outcome.failures },
    };
  }
  const detail = { s3Key: outcome.s3Key, generatedAt: outcome.generatedAt };
  return { decision: outcome.decision, action: 'ack', detail };
}

/**
 * The error's kind decides: terminal -> the DLQ now, with its own code; ignorable -> logged and
 * acknowledged; retryable -> retried until the receive budget is spent, then the DLQ.
 */
function dispositionOfError(
  error: unknown,
  message: WorkerMessage,
  maxReceiveCount: number,
): Disposition {
  const failure = failureOf(error);
  switch (failure.kind) {
    case ErrorKind.Terminal:
      return { decision: Decision.Poison, action: 'dead-letter', reason: reasonOf(failure) };
    case ErrorKind.Ignorable:
      return { decision: Decision.Ignored, action: 'ack', detail: { error: failure } };
    default:
      if (message.receiveCount < maxReceiveCount) {
        return { decision: Decision.Retry, action: 'retry', error };
      }
      return {
        decision: Decision.Retry,
        action: 'dead-letter',
        reason: {
          code: RETRIES_EXHAUSTED,
          message: `gave up after ${message.receiveCount} receives: ${failure.message}`,
        },
      };
  }
}

const reasonOf = (failure: Failure) => ({ code: failure.code, message: failure.message });

const RETRIES_EXHAUSTED = 'retries-exhausted';

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
  const record = nextFailure(
    meta.failures,
    epochSeconds(deps.clock),
    `${failure.code}: ${failure.message}`,
    policy,
  );
  const written = await deps.cacheTable.recordFailure({
    pk: meta.pk,
    observedGeneratedAt: meta.generatedAt,
    previousCount: meta.failures?.count ?? 0,
    record,
    broken: record.count >= policy.brokenAfter,
  });
  return written ? record.count : undefined;
}
