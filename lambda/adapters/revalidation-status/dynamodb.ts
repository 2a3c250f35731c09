/**
 * A revalidation's status as one row of the cache table: `pk = REVALIDATION#<effect id>`,
 * `sk = STATUS`, so a status GET is one strongly consistent GetItem and statuses never share a
 * partition. The status is kept as JSON (`detail`): only this service reads it. `ttl` matches the
 * REQ# row of the key that made it, so the effect id is known exactly as long as its key is.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RevalidationStatus, RevalidationStatuses } from '../../core/ports.js';
import { keyOf } from '../shared/dynamodb/items.js';

export const REVALIDATION_STATUS_PREFIX = 'REVALIDATION#';
export const STATUS_SK = 'STATUS';
export const revalidationStatusPartition = (effectId: string): string =>
  `${REVALIDATION_STATUS_PREFIX}${effectId}`;

/** How long a status is kept. @default 7 days, as the revalidation's REQ# row */
const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;

export class DynamoRevalidationStatuses implements RevalidationStatuses {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #ttlSeconds: number;

  constructor(options: { client: DynamoDBClient; tableName: string; ttlSeconds?: number }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#ttlSeconds = options.ttlSeconds ?? DEFAULT_TTL_SECONDS;
  }

  async put(status: RevalidationStatus): Promise<void> {
    const ttl = Math.floor(status.acceptedAtMs / 1000) + this.#ttlSeconds;
    await this.#client.send(
      new PutItemCommand({
        TableName: this.#tableName,
        Item: {
          ...keyOf(revalidationStatusPartition(status.effectId), STATUS_SK),
          detail: { S: JSON.stringify(status) },
          ttl: { N: String(ttl) },
        },
      }),
    );
  }

  async get(effectId: string): Promise<RevalidationStatus | undefined> {
    const { Item } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#tableName,
        Key: keyOf(revalidationStatusPartition(effectId), STATUS_SK),
        ConsistentRead: true,
      }),
    );
    const detail = Item?.detail?.S;
    return detail === undefined ? undefined : (JSON.parse(detail) as RevalidationStatus);
  }
}
