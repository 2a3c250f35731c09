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

export {
  Settlement,
  type IdempotentCall,
  type JsonValue,
  type RecordedOutcome,
} from './request-outcome.js';
import type { IdempotentCall, JsonValue, RecordedOutcome } from './request-outcome.js';

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
