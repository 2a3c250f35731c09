import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { IntentPayload, StoredOutcome } from '../adapters/dynamodb/request-store.js';
import { normaliseCacheKey, type CacheKey, type CacheKeyPolicy } from '../core/cache-key.js';
import { epochSeconds } from '../core/clock.js';
import { InvalidCacheKeyError, InvalidMessageError } from '../core/errors.js';
import { isFresh } from '../core/freshness.js';
import { parseIntent, type RegenerationIntent } from '../core/intent.js';
import type { CacheMeta } from '../core/ports.js';
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
    /** How long a REQ# row answers duplicates, in seconds. */
    readonly ttlSeconds: number;
  };
  /** Receives after which a retryable failure is dead-lettered instead of retried. */
  readonly maxReceiveCount: number;
  readonly owner?: string | undefined;
}

/**
 * Keyed by message ID (the payload's `messageId`), validated on `request` (stored as
 * `request_hash`, sha256), replays flagged so they are logged as `duplicate`.
 */
export const createIdempotencyConfig = (ttlSeconds: number): IdempotencyConfig =>
  new IdempotencyConfig({
    eventKeyJmesPath: 'messageId',
    throwOnNoIdempotencyKey: true,
    payloadValidationJmesPath: 'request',
    hashFunction: 'sha256',
    expiresAfterSeconds: ttlSeconds,
    responseHook: (response) => ({ ...(response as object), replayed: true }),
  });

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
 * corrected in DESIGN.md): META fresh -> done; REQ# COMPLETED -> recorded result; STARTED and
 * unexpired -> retry later; different request for the same message ID -> refuse; lease held ->
 * done (the holder regenerates); render; body; one publish transaction that seals REQ#.
 */
export async function processMessage(
  deps: WorkerDeps,
  message: WorkerMessage,
): Promise<MessageReport> {
  const parsed = parseMessage(deps, message);
  if ('action' in parsed) return parsed;
  const { intent, cacheKey } = parsed;
  const report = { idempotencyKey: message.messageId, cacheKeyHash: cacheKey.hash };
  const isSatisfied = satisfiedBy(intent);
  try {
    const meta = await deps.cacheTable.getMeta(cacheKey.pk);
    if (isSatisfied(meta, epochSeconds(deps.clock))) {
      return { ...report, decision: Decision.Fresh, action: 'ack' };
    }
    const regenerateOnce = makeIdempotent(
      async (_payload: IntentPayload): Promise<StoredOutcome> =>
        storedOutcome(
          await regenerate(deps, {
            cacheKey,
            isSatisfied,
            owner: deps.owner,
            seal: {
              idempotencyKey: message.messageId,
              ttl: epochSeconds(deps.clock) + deps.idempotency.ttlSeconds,
            },
          }),
        ),
      { persistenceStore: deps.idempotency.store, config: deps.idempotency.config },
    );
    const outcome = await regenerateOnce({
      messageId: message.messageId,
      pk: cacheKey.pk,
      request: {
        tenant: cacheKey.tenant ?? null,
        cacheKey: cacheKey.key,
        deployId: intent.deployId,
      },
    });
    return { ...report, ...dispositionOf(outcome) };
  } catch (error) {
    return { ...report, ...dispositionOfError(error, message, deps.maxReceiveCount) };
  }
}

/** The intent and its cache key, or the report that dead-letters a poison message. */
function parseMessage(
  deps: WorkerDeps,
  message: WorkerMessage,
): { intent: RegenerationIntent; cacheKey: CacheKey } | MessageReport {
  try {
    const intent = parseIntent(message.body);
    const cacheKey = normaliseCacheKey(
      { tenant: intent.tenant, rawPath: intent.path, rawQueryString: intent.query },
      deps.keyPolicy,
    );
    return { intent, cacheKey };
  } catch (error) {
    if (!(error instanceof InvalidMessageError || error instanceof InvalidCacheKeyError)) {
      throw error;
    }
    const code =
      error instanceof InvalidMessageError
        ? 'invalid-message'
        : `invalid-cache-key:${error.reason}`;
    return {
      idempotencyKey: message.messageId,
      cacheKeyHash: undefined,
      decision: Decision.Poison,
      action: 'dead-letter',
      reason: { code, message: error.message },
    };
  }
}

/** What a finished (or replayed) regeneration means for the message. */
function dispositionOf(outcome: StoredOutcome & { replayed?: boolean }): Disposition {
  if (outcome.replayed === true) {
    const detail = { recorded: outcome.decision, s3Key: outcome.s3Key };
    return { decision: Decision.Duplicate, action: 'ack', detail };
  }
  if (outcome.decision === Decision.Rejected) {
    const message = outcome.reason ?? 'renderer refused the page';
    return {
      decision: Decision.Rejected,
      action: 'dead-letter',
      reason: { code: 'render-rejected', message },
    };
  }
  const detail = { s3Key: outcome.s3Key, generatedAt: outcome.generatedAt };
  return { decision: outcome.decision as Decision, action: 'ack', detail };
}

/** Conflicts are refused for good; everything else is retried until the receive budget is spent. */
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
  if (message.receiveCount >= maxReceiveCount) {
    const reason = {
      code: 'retries-exhausted',
      message: `gave up after ${message.receiveCount} receives: ${describe(error)}`,
    };
    return { decision: Decision.Retry, action: 'dead-letter', reason };
  }
  return { decision: Decision.Retry, action: 'retry', error };
}

/**
 * The intent is answered when META is fresh, or when a generation newer than the one it saw as
 * stale has been published since (whoever published it).
 */
const satisfiedBy =
  (intent: RegenerationIntent) =>
  (meta: CacheMeta | undefined, nowSeconds: number): boolean =>
    meta !== undefined &&
    (isFresh(meta, nowSeconds) ||
      (intent.observedGeneratedAt !== undefined && meta.generatedAt > intent.observedGeneratedAt));

/** The JSON kept on REQ# (no page body). A publish already sealed its row in the transaction. */
function storedOutcome(outcome: RegenerateOutcome): StoredOutcome {
  switch (outcome.decision) {
    case 'new':
      return {
        decision: outcome.decision,
        s3Key: outcome.meta.s3Key,
        generatedAt: outcome.meta.generatedAt,
        sealed: true,
      };
    case 'rejected':
      return { decision: outcome.decision, reason: outcome.reason, status: outcome.status };
    case 'duplicate':
      // Another delivery of this intent published and sealed REQ# first: leave its row as it is.
      return { decision: outcome.decision, sealed: true };
    default:
      return { decision: outcome.decision };
  }
}

const describe = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);
