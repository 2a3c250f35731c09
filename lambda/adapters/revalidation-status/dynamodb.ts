/**
 * A revalidation's status as one row of the cache table: `pk = REVALIDATION#<effect id>`,
 * `sk = STATUS`, so a status GET is one strongly consistent GetItem and statuses never share a
 * partition. The status is kept as JSON (`detail`): only this service reads it. Fan-out batches
 * add their counts beside it with `ADD` (`added_marked`, `added_regenerations`, `fan_outs`), so
 * concurrent batches never overwrite each other. `ttl` matches the REQ# row of the key that made
 * it, so the effect id is known exactly as long as its key is.
 */
import {
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { RevalidationStatus, RevalidationStatuses } from '../../core/ports.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { DEFAULT_ROW_TTL_SECONDS, keyOf, num, type Item } from '../shared/dynamodb/items.js';

export const REVALIDATION_STATUS_PREFIX = 'REVALIDATION#';
export const STATUS_SK = 'STATUS';
export const revalidationStatusPartition = (effectId: string): string =>
  `${REVALIDATION_STATUS_PREFIX}${effectId}`;

/** How long a status is kept. @default 7 days, as the revalidation's REQ# row */

/** Counts only for a status that exists: a late batch never creates a bare row. */
const STATUS_EXISTS = 'attribute_exists(pk)';

export class DynamoRevalidationStatuses implements RevalidationStatuses {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #ttlSeconds: number;

  constructor(options: { client: DynamoDBClient; tableName: string; ttlSeconds?: number }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#ttlSeconds = options.ttlSeconds ?? DEFAULT_ROW_TTL_SECONDS;
  }

  async put(status: RevalidationStatus): Promise<void> {
    const ttl = Math.floor(status.acceptedAtMs / 1000) + this.#ttlSeconds;
    await this.#client.send(
      new PutItemCommand({
        TableName: this.#tableName,
        Item: {
          ...keyOf(revalidationStatusPartition(status.effectId), STATUS_SK),
          detail: { S: JSON.stringify(status) },
          ...(status.fanOuts === undefined ? {} : { fan_outs: { N: String(status.fanOuts) } }),
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
    return detail === undefined
      ? undefined
      : withCounts(JSON.parse(detail) as RevalidationStatus, Item ?? {});
  }

  async addMarked(effectId: string, counts: { marked: number; regenerations: number }) {
    await conditionalWrite(
      this.#update(effectId, {
        UpdateExpression: 'ADD added_marked :marked, added_regenerations :regenerations',
        ConditionExpression: STATUS_EXISTS,
        ExpressionAttributeValues: {
          ':marked': { N: String(counts.marked) },
          ':regenerations': { N: String(counts.regenerations) },
        },
      }),
    );
  }

  /**
   * Adds the fan-out to the set of those ended (`finished_fan_outs`: adding it twice is adding
   * it once); the one that completes the set records when the effect was done.
   */
  async finishFanOut(effectId: string, fanOut: string, atMs: number): Promise<void> {
    const counted = await conditionalWrite(
      this.#update(effectId, {
        UpdateExpression: 'ADD finished_fan_outs :fan_out',
        ConditionExpression: STATUS_EXISTS,
        ExpressionAttributeValues: { ':fan_out': { SS: [fanOut] } },
        ReturnValues: 'ALL_NEW',
      }),
    );
    if (counted?.Attributes === undefined || fanOutsLeft(counted.Attributes) > 0) return;
    await this.#update(effectId, {
      UpdateExpression: 'SET done_at_ms = if_not_exists(done_at_ms, :at)',
      ExpressionAttributeValues: { ':at': { N: String(atMs) } },
    });
  }

  #update(
    effectId: string,
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>,
  ) {
    return this.#client.send(
      new UpdateItemCommand({
        ...input,
        TableName: this.#tableName,
        Key: keyOf(revalidationStatusPartition(effectId), STATUS_SK),
      }),
    );
  }
}

/** The stored status with the counts batches added beside it. */
function withCounts(status: RevalidationStatus, item: Item): RevalidationStatus {
  const marked = num(item, 'added_marked') ?? 0;
  const regenerations = num(item, 'added_regenerations') ?? 0;
  const doneAtMs = num(item, 'done_at_ms');
  return {
    ...status,
    pages: status.pages + marked,
    marked: status.marked + marked,
    regenerations: status.regenerations + regenerations,
    ...(item.fan_outs === undefined ? {} : { fanOuts: fanOutsLeft(item) }),
    ...(doneAtMs === undefined ? {} : { state: 'done' as const, doneAtMs }),
  };
}

/** Fan-outs not ended yet: those the revalidation started (`fan_outs`) less those ended. */
const fanOutsLeft = (item: Item): number =>
  (num(item, 'fan_outs') ?? 0) - (item.finished_fan_outs?.SS?.length ?? 0);
