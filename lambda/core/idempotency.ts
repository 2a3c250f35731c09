/**
 * Idempotent calls, as the use cases see them: what an idempotent call is keyed and validated
 * by, and how its REQ# row ends. The row itself is written by the adapter
 * (`adapters/shared/dynamodb/request-row.ts`), which never reads a business decision: it writes the
 * `settlement` the use case chose.
 */
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
  /** Set on a replay: the outcome comes from the row, not from this delivery's work. */
  readonly replayed?: boolean | undefined;
}

/**
 * Where REQ# rows are kept: a Powertools persistence layer (the engine's claim, replay and
 * validation run on it), which also tells the request a key was first used with.
 */
export interface RequestStore extends BasePersistenceLayer {
  /** The canonical request stored with the key's row; undefined when there is no row. */
  firstRequest(pk: string, key: string): Promise<JsonValue | undefined>;
}
