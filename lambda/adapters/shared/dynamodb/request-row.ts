/**
 * The REQ# idempotency row, in one place: its attribute names, how a claim, a seal and a
 * settlement write it, and how it reads back. The FaceTheory attributes (`request_hash`,
 * `status` STARTED/COMPLETED/FAILED, `result_s3_key`, `ttl`) keep their names and types; the
 * others are ours. Both the claim store (`request-store.ts`) and the publish transaction
 * (`cache-table.ts`, which seals the row) use this codec.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  IndexedStatus,
  RequestStatus,
  requestSortKey,
  statusShardOf,
} from '../../../core/page/rows.js';
import { Settlement, type JsonValue, type RecordedOutcome } from '../../../core/request-outcome.js';
import {
  recordedOutcomeOf,
  sealedEnding,
  settledEnding,
  type NewClaim,
  type RequestRow,
  type RowEnding,
} from '../../request-store/rows.js';
import { keyOf, num, str, type Item } from './items.js';

/** An update of the row: expression, names and values, ready for UpdateItem or a transaction. */
export interface RowUpdate {
  readonly UpdateExpression: string;
  readonly ExpressionAttributeValues: Record<string, AttributeValue>;
}

export const requestKey = (pk: string, key: string): Item => keyOf(pk, requestSortKey(key));

export const claimItem = (claim: NewClaim): Item => ({
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
  return endingUpdate(sealedEnding(seal), { ttl: seal.ttl, now: seal.now });
}

/** The end of a call that did not seal the row in a publish: COMPLETED or FAILED, as settled. */
export function settleUpdate(
  pk: string,
  outcome: RecordedOutcome,
  ttl: number,
  now: number,
): RowUpdate {
  const update = endingUpdate(settledEnding(outcome), { ttl, now });
  if (outcome.settlement !== Settlement.Failed) return update;
  // FAILED stays in the status index for people; COMPLETED leaves it.
  return {
    UpdateExpression: update.UpdateExpression.replace(
      ' REMOVE #status_shard, #status_at',
      ', #status_shard = :shard, #status_at = :now',
    ),
    ExpressionAttributeValues: {
      ...update.ExpressionAttributeValues,
      ':shard': { S: statusShardOf(IndexedStatus.Failed, pk) },
    },
  };
}

/** A row's ending (`RowEnding`) as the attributes that keep it; the row leaves the index. */
function endingUpdate(ending: RowEnding, times: { ttl: number; now: number }): RowUpdate {
  const values: Record<string, AttributeValue> = {
    ':status': { S: ending.status },
    ':now': { N: String(times.now) },
    ':ttl': { N: String(times.ttl) },
  };
  const set = ['#status = :status', '#actual_completion = :now', '#ttl = :ttl'];
  const put = (attribute: string, value: AttributeValue | undefined) => {
    if (value === undefined) return;
    set.push(`#${attribute} = :${attribute}`);
    values[`:${attribute}`] = value;
  };
  const s = (value: string | undefined) => (value === undefined ? undefined : { S: value });
  put('outcome', s(ending.decision));
  put('result_s3_key', s(ending.s3Key));
  put(
    'result_generated_at',
    ending.generatedAt === undefined ? undefined : { N: String(ending.generatedAt) },
  );
  put('error', s(ending.error?.message));
  put('error_code', s(ending.error?.code));
  put('response', s(ending.response === undefined ? undefined : JSON.stringify(ending.response)));
  return {
    UpdateExpression: `SET ${set.join(', ')} REMOVE #status_shard, #status_at`,
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
    outcome:
      status === RequestStatus.Started || status === undefined
        ? undefined
        : recordedOutcomeOf(endingOf(item)),
  };
}

/** The ending a settled or sealed row keeps (a FaceTheory writer's seal has the result only). */
function endingOf(item: Item): RowEnding {
  const error = str(item, 'error');
  return {
    status:
      str(item, 'status') === RequestStatus.Failed ? RequestStatus.Failed : RequestStatus.Completed,
    decision: str(item, 'outcome'),
    s3Key: str(item, 'result_s3_key'),
    generatedAt: num(item, 'result_generated_at'),
    error:
      error === undefined
        ? undefined
        : { code: str(item, 'error_code') ?? 'failed', message: error },
    response: jsonOf(str(item, 'response')),
  };
}
