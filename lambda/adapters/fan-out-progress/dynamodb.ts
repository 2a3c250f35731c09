/**
 * The fan-out progress rows on the cache table: `pk = FANOUT`, `sk = <tenant>#<effect>#<mode>#
 * <tag>`, with the cursor, when it last moved and the pages marked. Every move is conditioned on
 * the cursor the step read, so of two copies of a step only one moves it. One partition: the
 * rows are few (one per tag still marking) and only the sweeper Queries them.
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { FanOutProgress, FanOutProgressRows } from '../../core/ports.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { keyOf, num, str, type Item } from '../shared/dynamodb/items.js';
import { FAN_OUT_PK, fanOutSortKey } from './keys.js';

/** A step moves the cursor only from the one it read: a duplicate step loses here. */
const AT_CURSOR = '#cursor = :from';

/** How long a progress row outlives its last move if nobody finishes it. */
const PROGRESS_TTL_SECONDS = 7 * 86_400;

export class DynamoFanOutProgressRows implements FanOutProgressRows {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: { client: DynamoDBClient; tableName: string }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async start(progress: FanOutProgress): Promise<void> {
    await this.#client.send(
      new PutItemCommand({ TableName: this.#tableName, Item: itemOf(progress) }),
    );
  }

  async get(progress: Pick<FanOutProgress, 'tenant' | 'effectId' | 'mode' | 'tag'>) {
    const { Item } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#tableName,
        Key: keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : progressOf(Item);
  }

  async advance(
    progress: FanOutProgress,
    input: { from: string; to: string; marked: number; atMs: number },
  ): Promise<boolean> {
    const moved = await conditionalWrite(
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
          UpdateExpression:
            'SET #cursor = :to, updated_at_ms = :at, #ttl = :ttl ADD marked :marked',
          ConditionExpression: AT_CURSOR,
          ExpressionAttributeNames: { '#cursor': 'cursor', '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':from': { S: input.from },
            ':to': { S: input.to },
            ':at': { N: String(input.atMs) },
            ':ttl': { N: String(ttlOf(input.atMs)) },
            ':marked': { N: String(input.marked) },
          },
        }),
      ),
    );
    return moved !== undefined;
  }

  async finish(progress: FanOutProgress, from: string): Promise<boolean> {
    const deleted = await conditionalWrite(
      this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
          ConditionExpression: AT_CURSOR,
          ExpressionAttributeNames: { '#cursor': 'cursor' },
          ExpressionAttributeValues: { ':from': { S: from } },
        }),
      ),
    );
    return deleted !== undefined;
  }

  /** One Query of the partition, filtered on `updated_at_ms` (the rows are few). */
  async stalled(beforeMs: number, limit: number): Promise<FanOutProgress[]> {
    const found: FanOutProgress[] = [];
    let start: Item | undefined;
    do {
      const page = await this.#client.send(
        new QueryCommand({
          TableName: this.#tableName,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression: 'updated_at_ms < :before',
          ExpressionAttributeValues: {
            ':pk': { S: FAN_OUT_PK },
            ':before': { N: String(beforeMs) },
          },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      found.push(...(page.Items ?? []).map(progressOf));
      start = page.LastEvaluatedKey;
    } while (start !== undefined && found.length < limit);
    return found.slice(0, limit);
  }
}

const ttlOf = (atMs: number): number => Math.floor(atMs / 1000) + PROGRESS_TTL_SECONDS;

function itemOf(progress: FanOutProgress): Item {
  return {
    ...keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
    ...(progress.tenant === undefined ? {} : { tenant: { S: progress.tenant } }),
    effect_id: { S: progress.effectId },
    mode: { S: progress.mode },
    tag: { S: progress.tag },
    regenerate: { BOOL: progress.regenerate },
    cursor: { S: progress.cursor },
    updated_at_ms: { N: String(progress.updatedAtMs) },
    marked: { N: String(progress.marked) },
    ttl: { N: String(ttlOf(progress.updatedAtMs)) },
  };
}

function progressOf(item: Item): FanOutProgress {
  return {
    tenant: str(item, 'tenant'),
    effectId: str(item, 'effect_id') ?? '',
    mode: str(item, 'mode') === 'expire' ? 'expire' : 'stale',
    tag: str(item, 'tag') ?? '',
    regenerate: item.regenerate?.BOOL === true,
    cursor: str(item, 'cursor') ?? '',
    updatedAtMs: num(item, 'updated_at_ms') ?? 0,
    marked: num(item, 'marked') ?? 0,
  };
}
