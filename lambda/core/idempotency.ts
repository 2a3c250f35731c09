/**
 * Idempotency, in one home: what an idempotent call is keyed and validated by, how its REQ# row
 * ends, and `runOnce`, the one way the use cases run work once per key (the worker per message
 * ID, the revalidate function per Idempotency-Key). Powertools idempotency is the engine: its
 * claim, replay and payload validation run on a `RequestStore` (adapters/request-store/). The
 * row itself is written by the adapter (`adapters/shared/dynamodb/request-row.ts`), which never
 * reads a business decision: it writes the `settlement` the use case chose.
 */
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';

/** JSON, as stored in a REQ# row and hashed into `request_hash`. */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * What an idempotent call is made with. `pk` and `key` locate the REQ# row (`sk = REQ#<key>`);
 * `request` holds the inputs that define the effect and is hashed into `request_hash`, so the
 * same key with another request is refused; `lockedBy` names the caller for operators.
 */
export interface IdempotentCall {
  readonly pk: string;
  readonly key: string;
  readonly request: { readonly [field: string]: JsonValue };
  readonly lockedBy?: string;
  readonly [extra: string]: JsonValue | undefined;
}

/** How a finished call leaves its REQ# row. */
export const Settlement = {
  /** The publish transaction already sealed REQ# COMPLETED with its result: nothing to write. */
  SealedByPublish: 'sealed-by-publish',
  /** Done without a publish of its own (e.g. someone else's publish answered it): COMPLETED. */
  Completed: 'completed',
  /** Given up for good (a terminal refusal, dead-lettered): FAILED, with the error, for people. */
  Failed: 'failed',
} as const;
export type Settlement = (typeof Settlement)[keyof typeof Settlement];

/** What a finished call records, and what a replay of it gets back. */
export interface RecordedOutcome {
  readonly settlement: Settlement;
  /** The decision logged for the call (`new`, `refused`, ...). */
  readonly decision: string;
  readonly s3Key?: string | undefined;
  readonly generatedAt?: number | undefined;
  readonly error?: { readonly code: string; readonly message: string } | undefined;
  /** After a failed render: the page's failures in a row, once recorded on its META. */
  readonly failures?: number | undefined;
  /** What the call answered (an HTTP status and body), replayed as is for the same key. */
  readonly response?: JsonValue | undefined;
}

/**
 * Where REQ# rows are kept: a Powertools persistence layer (the engine's claim, replay and
 * validation run on it), which also tells the request a key was first used with.
 */
export interface RequestStore extends BasePersistenceLayer {
  /** The canonical request stored with the key's row; undefined when there is no row. */
  firstRequest(pk: string, key: string): Promise<JsonValue | undefined>;
  /**
   * The claim on a key as its row holds it: the claim's token (new for every claim, so an
   * effect named after it is new when a key is used again after its window) and, while it is
   * STARTED, when the claim runs out. Undefined when there is no row.
   */
  claimOf(pk: string, key: string): Promise<ClaimState | undefined>;
  /** The token of the claim this instance holds on a key while its work runs. */
  heldClaim(pk: string, key: string): string | undefined;
}

/** A key's claim, as `RequestStore.claimOf` reads it. */
export interface ClaimState {
  readonly token: string | undefined;
  /** Epoch ms; set while the claim is STARTED. */
  readonly inProgressExpiresAtMs: number | undefined;
}

/** The engine and its store, as a use case is given them. */
export interface Idempotency {
  readonly store: RequestStore;
  /** Built by `createIdempotencyConfig()`. */
  readonly config: IdempotencyConfig;
}

/**
 * Powertools idempotency for an `IdempotentCall`: keyed by the call's `key` (the row is located
 * by `pk` + `key`, see `RequestStoreBase`), validated on `request` (stored as `request_hash`,
 * sha256), a row kept `ttlSeconds`.
 */
export const createIdempotencyConfig = (ttlSeconds: number): IdempotencyConfig =>
  new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    throwOnNoIdempotencyKey: true,
    payloadValidationJmesPath: 'request',
    hashFunction: 'sha256',
    expiresAfterSeconds: ttlSeconds,
  });

/**
 * The four ways a call under one key ends: `new` ran the work now (its own outcome, typed);
 * `replayed` found the key settled and returns what was recorded; `conflict` found the key used
 * for another request (nothing run); `in-progress` found a live claim (nothing run, try later).
 */
export type RunOnce<T extends RecordedOutcome> =
  | { readonly status: 'new'; readonly outcome: T }
  | { readonly status: 'replayed'; readonly outcome: RecordedOutcome }
  | { readonly status: 'conflict'; readonly error: Error }
  | { readonly status: 'in-progress'; readonly error: Error };

/**
 * Runs `work` at most once per key, as Powertools decides: claim the key, run, record the
 * outcome. Anything `work` throws releases the claim and is rethrown as is, as is a failure of
 * the store; the claim and replay rules themselves are the store's (`RequestStoreBase`).
 */
export async function runOnce<T extends RecordedOutcome>(
  idempotency: Idempotency,
  call: IdempotentCall,
  work: (call: IdempotentCall) => Promise<T>,
): Promise<RunOnce<T>> {
  let ran: T | undefined;
  const once = makeIdempotent(
    async (claimed: IdempotentCall): Promise<RecordedOutcome> => (ran = await work(claimed)),
    { persistenceStore: idempotency.store, config: idempotency.config },
  );
  try {
    const recorded = await once(call);
    return ran === undefined
      ? { status: 'replayed', outcome: recorded }
      : { status: 'new', outcome: ran };
  } catch (error) {
    if (error instanceof IdempotencyValidationError) return { status: 'conflict', error };
    if (error instanceof IdempotencyAlreadyInProgressError) return { status: 'in-progress', error };
    throw error;
  }
}
