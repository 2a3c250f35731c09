/**
 * What a REQ# row records of an idempotent call: the call, how it ends (`Settlement`) and its
 * outcome. Values only, no engine: the DynamoDB row adapter (`request-row.ts`), which the origin
 * bundles too, imports them from here, so the origin does not load Powertools idempotency.
 * `idempotency.ts` re-exports them beside the engine.
 */

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
