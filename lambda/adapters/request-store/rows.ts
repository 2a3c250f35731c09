/**
 * The REQ# row as every request-store adapter keeps it: a claim, the row a claim flow reads,
 * and how a row ends (one codec for every adapter, so the in-memory one keeps what DynamoDB
 * keeps). No engine here: the cache table's DynamoDB adapter, which the origin bundles too,
 * writes row endings in its publish transaction without loading Powertools idempotency.
 */
import type { JsonValue, RecordedOutcome } from '../../core/request-outcome.js';
import { RequestStatus } from '../../core/page/rows.js';

/** A new claim on an idempotency key (status STARTED). */
export interface NewClaim {
  readonly pk: string;
  readonly key: string;
  readonly claimToken: string;
  readonly requestHash: string | undefined;
  /** Epoch seconds: DynamoDB TTL may collect the row after this. */
  readonly ttl: number;
  /** Epoch ms: a STARTED row older than this was abandoned (its invocation ran out of time). */
  readonly inProgressExpiresAtMs: number | undefined;
  /** Epoch seconds. */
  readonly createdAt: number;
  /** Who claimed it (function and request id), for operators. */
  readonly lockedBy: string | undefined;
  /** The request, canonical JSON: what a reuse of the key with another body is compared with. */
  readonly request?: string | undefined;
}

/** What a REQ# row says, as the claim flow needs it. */
export interface RequestRow {
  readonly status: RequestStatus | undefined;
  readonly requestHash: string | undefined;
  readonly ttl: number | undefined;
  readonly inProgressExpiresAtMs: number | undefined;
  /** The token of the claim that wrote the row. */
  readonly claimToken?: string | undefined;
  /** The request the key was first used with (canonical JSON), when the row keeps it. */
  readonly request?: JsonValue | undefined;
  /** Undefined while STARTED. */
  readonly outcome: RecordedOutcome | undefined;
}

/**
 * How a REQ# row ends, as it is kept: what every adapter persists of an outcome, and all a
 * replay gets back. A publish seals the row (`sealedEnding`); any other end is a settlement
 * (`settledEnding`). One codec for every adapter, so the in-memory one keeps what DynamoDB keeps.
 */
export interface RowEnding {
  readonly status: typeof RequestStatus.Completed | typeof RequestStatus.Failed;
  /** The decision (`outcome`); absent on a row another writer sealed. */
  readonly decision?: string | undefined;
  readonly s3Key?: string | undefined;
  readonly generatedAt?: number | undefined;
  readonly error?: { readonly code: string; readonly message: string } | undefined;
  readonly response?: JsonValue | undefined;
}

/** Longest error message a row keeps. */
const MAX_ERROR_LENGTH = 2048;

/** What a settlement leaves on the row (a FAILED row keeps its reason, for people). */
export const settledEnding = (outcome: RecordedOutcome): RowEnding => ({
  status: outcome.settlement === 'failed' ? RequestStatus.Failed : RequestStatus.Completed,
  decision: outcome.decision,
  s3Key: outcome.s3Key,
  error:
    outcome.error === undefined
      ? undefined
      : { code: outcome.error.code, message: outcome.error.message.slice(0, MAX_ERROR_LENGTH) },
  response: outcome.response,
});

/** What the publish transaction leaves on the row it seals: COMPLETED with its result. */
export const sealedEnding = (sealed: { s3Key: string; generatedAt: number }): RowEnding => ({
  status: RequestStatus.Completed,
  decision: 'new',
  s3Key: sealed.s3Key,
  generatedAt: sealed.generatedAt,
});

/**
 * The outcome a replay gets from a row's ending. A row without a decision, or with `new`, was
 * sealed by a publish (ours or FaceTheory's), which carries only the result fields.
 */
export function recordedOutcomeOf(ending: RowEnding): RecordedOutcome {
  const failed = ending.status === RequestStatus.Failed;
  const sealed = ending.decision === undefined || ending.decision === 'new';
  return {
    settlement: failed ? 'failed' : sealed ? 'sealed-by-publish' : 'completed',
    decision: ending.decision ?? (failed ? 'failed' : 'new'),
    s3Key: ending.s3Key,
    generatedAt: ending.generatedAt,
    error: ending.error,
    response: ending.response,
  };
}
