/**
 * The REQ# idempotency row, in one place: its attribute names, how a claim, a seal and a
 * settlement write it, and how it reads back. The FaceTheory attributes (`request_hash`,
 * `status` STARTED/COMPLETED/FAILED, `result_s3_key`, `ttl`) keep their names and types; the
 * others are ours. Both the claim store (`request-store.ts`) and the publish transaction
 * (`cache-table.ts`, which seals the row) use this codec.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { IndexedStatus, RequestStatus, requestSortKey, statusShardOf } from '../../../core/rows.js';
import { Settlement, type JsonValue, type RecordedOutcome } from '../../../core/idempotency.js';
import type { Claim, RequestRow } from '../../request-store/base.js';
import { keyOf, num, str, type Item } from './items.js';

/** An update of the row: expression, names and values, ready for UpdateItem or a transaction. */
export interface RowUpdate {
  readonly UpdateExpression: string;
  readonly ExpressionAttributeValues: Record<string, AttributeValue>;
}

export const requestKey = (pk: string, key: string): Item => keyOf(pk, requestSortKey(key));

export const claimItem = (claim: Claim): Item => ({
  ...requestKey(claim.pk, claim.key),
  status: { S: RequestStatus.Started },
  claim_token: { S: claim.claimToken },
  ttl: { N: String(claim.ttl) },
  created_at: { N: String(claim.createdAt) },
  ...(claim.inProgressExpiresAtMs === undefined
    ? {}
    : {
        in_progress_expires_at_ms: { N: String(claim.inProgressExpiresAtMs) },
        expected_completion: { N: String(Math.ceil(claim.inProgressExpiresAtMs / 1000)) },
      }),
  ...(claim.requestHash ? { request_hash: { S: claim.requestHash } } : {}),
  ...(claim.lockedBy ? { locked_by: { S: claim.lockedBy } } : {}),
  ...(claim.request === undefined ? {} : { request: { S: claim.request } }),
  // In the status index while STARTED, sorted by when it should have finished.
  status_shard: { S: statusShardOf(IndexedStatus.Started, claim.pk) },
  status_at: {
    N: String(
      claim.inProgressExpiresAtMs === undefined
        ? claim.createdAt
        : Math.ceil(claim.inProgressExpiresAtMs / 1000),
    ),
  },
});

/** COMPLETED with the published body, written inside the publish transaction. */
export function sealUpdate(seal: {
  s3Key: string;
  generatedAt: number;
  ttl: number;
  now: number;
}): RowUpdate {
  return {
    UpdateExpression:
      'SET #status = :completed, #result_s3_key = :s3_key, #result_generated_at = :generated_at, ' +
      '#outcome = :outcome, #actual_completion = :now, #ttl = :ttl REMOVE #status_shard, #status_at',
    ExpressionAttributeValues: {
      ':completed': { S: RequestStatus.Completed },
      ':s3_key': { S: seal.s3Key },
      ':generated_at': { N: String(seal.generatedAt) },
      ':outcome': { S: 'new' },
      ':now': { N: String(seal.now) },
      ':ttl': { N: String(seal.ttl) },
    },
  };
}

/** The end of a call that did not seal the row in a publish: COMPLETED or FAILED, as settled. */
export function settleUpdate(
  pk: string,
  outcome: RecordedOutcome,
  ttl: number,
  now: number,
): RowUpdate {
  const failed = outcome.settlement === Settlement.Failed;
  const values: Record<string, AttributeValue> = {
    ':status': { S: failed ? RequestStatus.Failed : RequestStatus.Completed },
    ':outcome': { S: outcome.decision },
    ':now': { N: String(now) },
    ':ttl': { N: String(ttl) },
  };
  let set = 'SET #status = :status, #outcome = :outcome, #actual_completion = :now, #ttl = :ttl';
  if (outcome.s3Key !== undefined) {
    set += ', #result_s3_key = :s3_key';
    values[':s3_key'] = { S: outcome.s3Key };
  }
  if (outcome.error !== undefined) {
    set += ', #error = :error, #error_code = :error_code';
    values[':error'] = { S: outcome.error.message.slice(0, 2048) };
    values[':error_code'] = { S: outcome.error.code };
  }
  if (outcome.response !== undefined) {
    set += ', #response = :response';
    values[':response'] = { S: JSON.stringify(outcome.response) };
  }
  // FAILED stays in the status index for people; COMPLETED leaves it.
  if (failed) {
    set += ', #status_shard = :shard, #status_at = :now';
    values[':shard'] = { S: statusShardOf(IndexedStatus.Failed, pk) };
    return { UpdateExpression: set, ExpressionAttributeValues: values };
  }
  return {
    UpdateExpression: `${set} REMOVE #status_shard, #status_at`,
    ExpressionAttributeValues: values,
  };
}

const jsonOf = (text: string | undefined): JsonValue | undefined =>
  text === undefined ? undefined : (JSON.parse(text) as JsonValue);

export function rowOf(item: Item): RequestRow {
  const status = str(item, 'status') as RequestStatus | undefined;
  return {
    status,
    requestHash: str(item, 'request_hash'),
    ttl: num(item, 'ttl'),
    inProgressExpiresAtMs: num(item, 'in_progress_expires_at_ms'),
    claimToken: str(item, 'claim_token'),
    request: jsonOf(str(item, 'request')),
    outcome: status === RequestStatus.Started || status === undefined ? undefined : outcomeOf(item),
  };
}

/** A sealed row written by a publish (ours or FaceTheory's) carries only the result fields. */
function outcomeOf(item: Item): RecordedOutcome {
  const failed = str(item, 'status') === RequestStatus.Failed;
  const error = str(item, 'error');
  return {
    settlement: failed
      ? Settlement.Failed
      : str(item, 'outcome') === undefined || str(item, 'outcome') === 'new'
        ? Settlement.SealedByPublish
        : Settlement.Completed,
    decision: str(item, 'outcome') ?? (failed ? 'failed' : 'new'),
    s3Key: str(item, 'result_s3_key'),
    generatedAt: num(item, 'result_generated_at'),
    error:
      error === undefined
        ? undefined
        : { code: str(item, 'error_code') ?? 'failed', message: error },
    response: jsonOf(str(item, 'response')),
  };
}
