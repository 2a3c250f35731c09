import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import {
  IdempotencyItemAlreadyExistsError,
  IdempotencyItemNotFoundError,
  IdempotencyRecordStatus,
} from '@aws-lambda-powertools/idempotency';
import {
  BasePersistenceLayer,
  IdempotencyRecord,
} from '@aws-lambda-powertools/idempotency/persistence';
import { RequestStatus, requestSortKey } from '../../core/rows.js';
import { namesOf } from './conditions.js';
import { keyOf, num, str, type Item } from './items.js';

/**
 * What the idempotent regeneration is called with. JSON, so Powertools can hash `request` into
 * `request_hash`; `pk` and `messageId` locate the REQ# row.
 */
export interface IntentPayload {
  readonly messageId: string;
  readonly pk: string;
  /** The inputs that define the intent: tenant, cache key and policy (deploy id). */
  readonly request: { readonly [field: string]: string | number | null };
  readonly [extra: string]: JSONValue;
}

/** What a finished regeneration records, and what a duplicate delivery gets back. */
export interface StoredOutcome {
  readonly decision: string;
  readonly s3Key?: string;
  readonly generatedAt?: number;
  readonly reason?: string;
  /** Already written COMPLETED by the publish transaction: nothing left to store. */
  readonly sealed?: boolean;
  readonly [extra: string]: JSONValue | undefined;
}

export interface RequestRowStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/** Fragments of the claim condition, mirroring Powertools' own DynamoDB layer. */
export const Claim = {
  /** No row yet for this intent. */
  absent: 'attribute_not_exists(#pk)',
  /** The row outlived its idempotency window: the intent may run again. */
  expired: '#ttl < :now',
  /** A STARTED row whose invocation ran out of time (crashed or timed out). */
  abandoned: '(#status = :started AND #in_progress_expires_at_ms < :now_ms)',
} as const;
const CLAIM_CONDITION = `${Claim.absent} OR ${Claim.expired} OR ${Claim.abandoned}`;
/**
 * Only the claimer releases its claim, and only while it is unfinished: a sealed result is never
 * erased by a late failure, and a delivery that outlived its claim cannot release the claim a
 * duplicate took over from it.
 */
export const OWN_OPEN_CLAIM = '#status = :started AND #claim_token = :claim_token';

/**
 * Powertools idempotency, persisted as the FaceTheory REQ# row: the intent's own partition
 * (`pk` of the cache key), `sk = REQ#<message id>`, `request_hash`, `status`
 * STARTED/COMPLETED/FAILED, `result_s3_key`, `ttl`. Powertools keeps the claim, expiry,
 * payload-validation and replay logic; this class only maps records to rows.
 */
export class RequestRowStore extends BasePersistenceLayer {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  /** The token of each claim this instance holds, by idempotency key, until it is released or sealed. */
  readonly #claims = new Map<string, string>();

  constructor(options: RequestRowStoreOptions) {
    super();
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  /** The record key names the row itself: the cache entry's partition and the message ID. */
  protected override getHashedIdempotencyKey(data: JSONValue): string {
    const { pk, messageId } = (data ?? {}) as Partial<IntentPayload>;
    if (typeof pk !== 'string' || typeof messageId !== 'string' || !pk || !messageId) {
      throw new Error('an idempotent regeneration needs a pk and a messageId');
    }
    return JSON.stringify([pk, messageId]);
  }

  protected async _getRecord(idempotencyKey: string): Promise<IdempotencyRecord> {
    const { Item } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#tableName,
        Key: rowKey(idempotencyKey),
        ConsistentRead: true,
      }),
    );
    if (Item === undefined) throw new IdempotencyItemNotFoundError();
    return recordOf(idempotencyKey, Item);
  }

  protected async _putRecord(record: IdempotencyRecord): Promise<void> {
    const now = Date.now();
    const claimToken = randomUUID();
    const item: Item = {
      ...rowKey(record.idempotencyKey),
      status: { S: RequestStatus.Started },
      claim_token: { S: claimToken },
      ttl: { N: String(record.expiryTimestamp ?? Math.ceil(now / 1000)) },
      ...(record.inProgressExpiryTimestamp === undefined
        ? {}
        : { in_progress_expires_at_ms: { N: String(record.inProgressExpiryTimestamp) } }),
      ...(record.payloadHash ? { request_hash: { S: record.payloadHash } } : {}),
    };
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: item,
          ConditionExpression: CLAIM_CONDITION,
          ExpressionAttributeNames: namesOf(CLAIM_CONDITION),
          ExpressionAttributeValues: {
            ':now': { N: String(now / 1000) },
            ':now_ms': { N: String(now) },
            ':started': { S: RequestStatus.Started },
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.#claims.set(record.idempotencyKey, claimToken);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new IdempotencyItemAlreadyExistsError(
          `regeneration intent ${record.idempotencyKey} was already claimed`,
          error.Item === undefined ? undefined : recordOf(record.idempotencyKey, error.Item),
        );
      }
      throw error;
    }
  }

  /** Records a finished outcome: FAILED for a terminal refusal, COMPLETED otherwise. */
  protected async _updateRecord(record: IdempotencyRecord): Promise<void> {
    this.#claims.delete(record.idempotencyKey);
    const outcome = record.responseData as StoredOutcome | undefined;
    if (outcome?.sealed === true) return;
    const failed = outcome?.decision === 'rejected';
    const update = `SET #status = :status, #ttl = :ttl, #outcome = :outcome${failed ? ', #error = :error' : ''}`;
    const values: Record<string, AttributeValue> = {
      ':status': { S: failed ? RequestStatus.Failed : RequestStatus.Completed },
      ':ttl': { N: String(record.expiryTimestamp ?? Math.ceil(Date.now() / 1000)) },
      ':outcome': { S: outcome?.decision ?? 'unknown' },
    };
    if (failed) values[':error'] = { S: outcome.reason ?? 'rejected' };
    await this.#client.send(
      new UpdateItemCommand({
        TableName: this.#tableName,
        Key: rowKey(record.idempotencyKey),
        UpdateExpression: update,
        ExpressionAttributeNames: namesOf(update),
        ExpressionAttributeValues: values,
      }),
    );
  }

  /** Releases this instance's own claim after a failure, so a retry can take the intent again. */
  protected async _deleteRecord(record: IdempotencyRecord): Promise<void> {
    const claimToken = this.#claims.get(record.idempotencyKey);
    this.#claims.delete(record.idempotencyKey);
    if (claimToken === undefined) return;
    try {
      await this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: rowKey(record.idempotencyKey),
          ConditionExpression: OWN_OPEN_CLAIM,
          ExpressionAttributeNames: namesOf(OWN_OPEN_CLAIM),
          ExpressionAttributeValues: {
            ':started': { S: RequestStatus.Started },
            ':claim_token': { S: claimToken },
          },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

function rowKey(idempotencyKey: string): Item {
  const [pk, messageId] = JSON.parse(idempotencyKey) as [string, string];
  return keyOf(pk, requestSortKey(messageId));
}

function recordOf(idempotencyKey: string, item: Item): IdempotencyRecord {
  const status = str(item, 'status');
  const started = status === RequestStatus.Started;
  return new IdempotencyRecord({
    idempotencyKey,
    status: started ? IdempotencyRecordStatus.INPROGRESS : IdempotencyRecordStatus.COMPLETED,
    expiryTimestamp: num(item, 'ttl'),
    inProgressExpiryTimestamp: num(item, 'in_progress_expires_at_ms'),
    payloadHash: str(item, 'request_hash'),
    responseData: started ? undefined : outcomeOf(item),
  });
}

/** A sealed row carries only the FaceTheory result fields: it was a publish (`new`). */
function outcomeOf(item: Item): StoredOutcome {
  const outcome: Record<string, JSONValue> = { decision: str(item, 'outcome') ?? 'new' };
  const s3Key = str(item, 'result_s3_key');
  const generatedAt = num(item, 'result_generated_at');
  const reason = str(item, 'error');
  if (s3Key !== undefined) outcome.s3Key = s3Key;
  if (generatedAt !== undefined) outcome.generatedAt = generatedAt;
  if (reason !== undefined) outcome.reason = reason;
  return outcome as StoredOutcome;
}
