import {
  IdempotencyAlreadyInProgressError,
  IdempotencyValidationError,
  makeIdempotent,
  type IdempotencyConfig,
} from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import { normaliseCacheKey, type CacheKey, type CacheKeyPolicy } from '../core/cache-key.js';
import { epochSeconds } from '../core/clock.js';
import { ErrorKind, failureOf, type Failure } from '../core/errors.js';
import { isAnswered, type Need } from '../core/freshness.js';
import { Settlement, type IdempotentCall, type RecordedOutcome } from '../core/idempotency.js';
import { parseIntent, type RegenerationIntent } from '../core/intent.js';
import {
  Decision,
  regenerate,
  type RegenerateDeps,
  type RegenerateOutcome,
} from '../core/regenerate.js';

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
  readonly idempotency: {
    readonly store: BasePersistenceLayer;
    /** Built by `createIdempotencyConfig()`. */
    readonly config: IdempotencyConfig;
  };
  /** Receives after which a retryable failure is dead-lettered instead of retried. */
  readonly maxReceiveCount: number;
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
 * corrected in DESIGN.md): META answers it -> done; REQ# COMPLETED -> recorded result; STARTED
 * and unexpired -> retry later; different request for the same message ID -> refuse; lease
 * held -> done (the holder regenerates); render; body; one publish transaction that seals REQ#.
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
    if (isAnswered(meta, epochSeconds(deps.clock), need)) {
      return { ...report, decision: Decision.Fresh, action: 'ack' };
    }
    const regenerateOnce = makeIdempotent(
      (call: IdempotentCall) => settle(deps, call, cacheKey, need),
      { persistenceStore: deps.idempotency.store, config: deps.idempotency.config },
    );
    const call: IdempotentCall = {
      pk: cacheKey.pk,
      key: message.messageId,
      request: {
        tenant: cacheKey.tenant ?? null,
        cacheKey: cacheKey.key,
        deployId: intent.deployId,
      },
    };
    return { ...report, ...dispositionOf(await regenerateOnce(call)) };
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
 * The idempotent part: regenerate, and say how its REQ# row ends. A terminal failure is
 * recorded (FAILED, with its reason) rather than thrown, so the row keeps it for people and a
 * redelivery gets the same answer; anything else thrown releases the claim for a retry.
 */
async function settle(
  deps: WorkerDeps,
  call: IdempotentCall,
  cacheKey: CacheKey,
  need: Need,
): Promise<RecordedOutcome> {
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
    if (failure.kind !== ErrorKind.Terminal) throw error;
    return { settlement: Settlement.Failed, decision: Decision.Refused, error: reasonOf(failure) };
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

/** What a finished (or replayed) call means for the message. */
function dispositionOf(outcome: RecordedOutcome): Disposition {
  if (outcome.replayed === true) {
    const detail = { recorded: outcome.decision, s3Key: outcome.s3Key };
    return { decision: Decision.Duplicate, action: 'ack', detail };
  }
  if (outcome.settlement === Settlement.Failed) {
    return {
      decision: outcome.decision as Decision,
      action: 'dead-letter',
      reason: outcome.error ?? { code: 'failed', message: 'the regeneration failed for good' },
    };
  }
  const detail = { s3Key: outcome.s3Key, generatedAt: outcome.generatedAt };
  return { decision: outcome.decision as Decision, action: 'ack', detail };
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
  if (error instanceof IdempotencyValidationError) {
    const reason = {
      code: 'idempotency-conflict',
      message: 'this message ID was already used for a different request; nothing was applied',
    };
    return { decision: Decision.Conflict, action: 'dead-letter', reason };
  }
  if (error instanceof IdempotencyAlreadyInProgressError) {
    return { decision: Decision.InProgress, action: 'retry', error };
  }
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
          code: 'retries-exhausted',
          message: `gave up after ${message.receiveCount} receives: ${failure.message}`,
        },
      };
  }
}

const reasonOf = (failure: Failure) => ({ code: failure.code, message: failure.message });
