import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../core/clock.js';
import type { RecordedOutcome } from '../../core/idempotency.js';
import { RequestStatus } from '../../core/page/rows.js';
import { ClaimRefused, RequestStoreBase } from './base.js';
import type { NewClaim, RequestRow } from './rows.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { Claim, namesOf } from '../shared/dynamodb/conditions.js';
import { claimItem, requestKey, rowOf, settleUpdate } from '../shared/dynamodb/request-row.js';

export interface RequestRowStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Every expiry (claim, in-progress, TTL) is read from this clock. @default systemClock */
  readonly clock?: Clock | undefined;
}

const CLAIM_CONDITION = `${Claim.absent} OR ${Claim.expired} OR ${Claim.abandoned}`;

/**
 * Powertools idempotency persisted as the FaceTheory REQ# row, in the call's own partition:
 * `request_hash`, `status` STARTED/COMPLETED/FAILED, `result_s3_key`, `ttl` (codec:
 * `request-row.ts`). The claim and release rules are DynamoDB conditions.
 */
export class RequestRowStore extends RequestStoreBase {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: RequestRowStoreOptions) {
    super(options.clock);
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  protected async insertClaim(claim: NewClaim, nowMs: number): Promise<void> {
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: claimItem(claim),
          ConditionExpression: CLAIM_CONDITION,
          ExpressionAttributeNames: namesOf(CLAIM_CONDITION),
          ExpressionAttributeValues: {
            ':now': { N: String(nowMs / 1000) },
            ':now_ms': { N: String(nowMs) },
            ':started': { S: RequestStatus.Started },
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      throw new ClaimRefused(error.Item === undefined ? undefined : rowOf(error.Item));
    }
  }

  protected async readRow(pk: string, key: string): Promise<RequestRow | undefined> {
    const { Item } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#tableName,
        Key: requestKey(pk, key),
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : rowOf(Item);
  }

  protected async writeSettlement(
    pk: string,
    key: string,
    outcome: RecordedOutcome,
    times: { ttl: number; now: number },
  ): Promise<void> {
    const update = settleUpdate(pk, outcome, times.ttl, times.now);
    await this.#client.send(
      new UpdateItemCommand({
        TableName: this.#tableName,
        Key: requestKey(pk, key),
        ...update,
        ExpressionAttributeNames: namesOf(update.UpdateExpression),
      }),
    );
  }

  protected async deleteOwnClaim(pk: string, key: string, claimToken: string): Promise<void> {
    await conditionalWrite(
      this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: requestKey(pk, key),
          ConditionExpression: Claim.ownOpen,
          ExpressionAttributeNames: namesOf(Claim.ownOpen),
          ExpressionAttributeValues: {
            ':started': { S: RequestStatus.Started },
            ':claim_token': { S: claimToken },
          },
        }),
      ),
    );
  }
}
