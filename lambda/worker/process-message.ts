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

/** What to do with the message, and what to log about it. */
export type MessageReport = {
  readonly decision: Decision;
  readonly idempotencyKey: string;
  readonly cacheKeyHash: string | undefined;
  readonly detail?: Record<string, unknown>;
} & (
  | { readonly action: 'ack' }
  | { readonly action: 'retry'; readonly error: unknown }
  | { readonly action: 'dead-letter'; readonly reason: { code: string; message: string } }
);

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
  const base = { idempotencyKey: message.messageId };
  let intent: RegenerationIntent;
  let cacheKey: CacheKey;
  try {
    intent = parseIntent(message.body);
    cacheKey = normaliseCacheKey(
      { tenant: intent.tenant, rawPath: intent.path, rawQueryString: intent.query },
      deps.keyPolicy,
    );
  } catch (error) {
    if (!(error instanceof InvalidMessageError || error instanceof InvalidCacheKeyError))
      throw error;
    const code =
      error instanceof InvalidMessageError
        ? 'invalid-message'
        : `invalid-cache-key:${error.reason}`;
    return {
      ...base,
      cacheKeyHash: undefined,
      decision: Decision.Poison,
      action: 'dead-letter',
      reason: { code, message: error.message },
    };
  }

  const report = { ...base, cacheKeyHash: cacheKey.hash };
  const isSatisfied = satisfiedBy(intent);
  try {
    const meta = await deps.cacheTable.getMeta(cacheKey.pk);
    if (isSatisfied(meta, epochSeconds(deps.clock))) {
      return { ...report, decision: Decision.Fresh, action: 'ack' };
    }
    const payload: IntentPayload = {
      messageId: message.messageId,
      pk: cacheKey.pk,
      request: {
        tenant: cacheKey.tenant ?? null,
        cacheKey: cacheKey.key,
        deployId: intent.deployId,
      },
    };
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
    const outcome = (await regenerateOnce(payload)) as StoredOutcome & { replayed?: boolean };
    if (outcome.replayed === true) {
      return {
        ...report,
        decision: Decision.Duplicate,
        action: 'ack',
        detail: { recorded: outcome.decision, s3Key: outcome.s3Key },
      };
    }
    if (outcome.decision === Decision.Rejected) {
      return {
        ...report,
        decision: Decision.Rejected,
        action: 'dead-letter',
        reason: { code: 'render-rejected', message: outcome.reason ?? 'renderer refused the page' },
      };
    }
    return {
      ...report,
      decision: outcome.decision as Decision,
      action: 'ack',
      detail: { s3Key: outcome.s3Key, generatedAt: outcome.generatedAt },
    };
  } catch (error) {
    if (error instanceof IdempotencyValidationError) {
      return {
        ...report,
        decision: Decision.Conflict,
        action: 'dead-letter',
        reason: {
          code: 'idempotency-conflict',
          message: 'this message ID was already used for a different request; nothing was applied',
        },
      };
    }
    if (error instanceof IdempotencyAlreadyInProgressError) {
      return { ...report, decision: Decision.InProgress, action: 'retry', error };
    }
    if (message.receiveCount >= deps.maxReceiveCount) {
      return {
        ...report,
        decision: Decision.Retry,
        action: 'dead-letter',
        reason: {
          code: 'retries-exhausted',
          message: `gave up after ${message.receiveCount} receives: ${describe(error)}`,
        },
      };
    }
    return { ...report, decision: Decision.Retry, action: 'retry', error };
  }
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
