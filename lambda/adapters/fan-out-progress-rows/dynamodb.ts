/**
 * The fan-out progress rows on the cache table: `pk = FANOUT`, `sk = <tenant>#<effect>#<mode>#
 * <tag>`, with the cursor, when it last moved and the pages marked. Every move is conditioned on
 * the cursor the step read, so of two copies of a step only one moves it, and is one
 * TransactWriteItems with the batch's counts on the effect's status row (2 items, 4 WCU a step):
 * a step counted is a step moved, exactly once. One partition: the rows are few (one per tag
 * still marking) and only the sweeper Queries them.
 */
import {
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { TransactionConflictError } from '../../core/errors.js';
import type {
  FanOutProgress,
  FanOutProgressRows,
  StepCounts,
} from '../../core/revalidate/ports.js';
import { revalidationStatusPartition, STATUS_SK } from '../revalidation-statuses/dynamodb.js';
import { TRANSIENT_CODES } from '../shared/dynamodb/cancellation.js';
import { Guard } from '../shared/dynamodb/conditions.js';
import { DEFAULT_ROW_TTL_SECONDS, keyOf, num, str, type Item } from '../shared/dynamodb/items.js';
import { FAN_OUT_PK, fanOutSortKey } from './keys.js';
import { queryAll } from '../shared/dynamodb/query-all.js';
import { DynamoTableAdapter } from '../shared/dynamodb/table.js';

/** How long a progress row outlives its last move if nobody finishes it. */
const PROGRESS_TTL_SECONDS = 7 * 86_400;

export class DynamoFanOutProgressRows extends DynamoTableAdapter implements FanOutProgressRows {
  async start(progress: FanOutProgress): Promise<void> {
    await this.db.send(
      new PutItemCommand({ TableName: this.table, Item: fanOutProgressItem(progress) }),
    );
  }

  async get(progress: Pick<FanOutProgress, 'tenant' | 'effectId' | 'mode' | 'tag'>) {
    const { Item } = await this.db.send(
      new GetItemCommand({
        TableName: this.table,
        Key: keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : progressOf(Item);
  }

  async advance(
    progress: FanOutProgress,
    input: { from: string; to: string; counts: StepCounts; atMs: number },
  ): Promise<boolean> {
    return this.#moveAndCount(progress, input, {
      Update: {
        TableName: this.table,
        Key: keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
        UpdateExpression:
          'SET #cursor = :to, moved_from = :from, updated_at_ms = :at, #ttl = :ttl ADD marked :marked',
        ConditionExpression: Guard.cursorUnmoved,
        ExpressionAttributeNames: { '#cursor': 'cursor', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':from': { S: input.from },
          ':to': { S: input.to },
          ':at': { N: String(input.atMs) },
          ':ttl': { N: String(ttlOf(input.atMs)) },
          ':marked': { N: String(input.counts.marked) },
        },
      },
    });
  }

  async finish(
    progress: FanOutProgress,
    input: { from: string; counts: StepCounts; atMs: number },
  ): Promise<boolean> {
    const row = {
      Delete: {
        TableName: this.table,
        Key: keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
        ConditionExpression: Guard.cursorUnmoved,
        ExpressionAttributeNames: { '#cursor': 'cursor' },
        ExpressionAttributeValues: { ':from': { S: input.from } },
      },
    };
    return this.#moveAndCount(progress, { ...input, finished: true }, row);
  }

  /**
   * The progress row's write and the status's counts in one transaction. A status gone by TTL
   * is counted anyway, as a bare row that expires in turn (never read: it has no detail).
   */
  async #moveAndCount(
    progress: FanOutProgress,
    input: { counts: StepCounts; atMs: number; finished?: boolean },
    row: TransactWriteItem,
  ): Promise<boolean> {
    const finished = input.finished === true;
    const status: TransactWriteItem = {
      Update: {
        TableName: this.table,
        Key: keyOf(revalidationStatusPartition(progress.effectId), STATUS_SK),
        UpdateExpression:
          'ADD added_marked :marked, added_regenerations :regenerations' +
          (finished ? ', fan_outs :minus SET done_at_ms = :at, ' : ' SET ') +
          '#ttl = if_not_exists(#ttl, :ttl)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':marked': { N: String(input.counts.marked) },
          ':regenerations': { N: String(input.counts.regenerations) },
          ':ttl': { N: String(Math.floor(input.atMs / 1000) + DEFAULT_ROW_TTL_SECONDS) },
          ...(finished ? { ':minus': { N: '-1' }, ':at': { N: String(input.atMs) } } : {}),
        },
      },
    };
    try {
      await this.db.send(new TransactWriteItemsCommand({ TransactItems: [row, status] }));
      return true;
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') throw error;
      const [moved] =
        (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
      if (moved?.Code === 'ConditionalCheckFailed') return false;
      const codes = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      if (codes?.some((reason) => TRANSIENT_CODES.has(reason.Code ?? ''))) {
        throw new TransactionConflictError(`fan-out step on ${progress.tag} was cancelled`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  /** One Query of the partition, filtered on `updated_at_ms` (the rows are few). */
  async stalled(beforeMs: number, limit: number): Promise<FanOutProgress[]> {
    const items = await queryAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'pk = :pk',
        FilterExpression: 'updated_at_ms < :before',
        ExpressionAttributeValues: {
          ':pk': { S: FAN_OUT_PK },
          ':before': { N: String(beforeMs) },
        },
        ConsistentRead: true,
      },
      limit,
    );
    return items.slice(0, limit).map(progressOf);
  }
}

const ttlOf = (atMs: number): number => Math.floor(atMs / 1000) + PROGRESS_TTL_SECONDS;

/** A progress row as it is kept (`FanOutStarts` writes it too). */
export function fanOutProgressItem(progress: FanOutProgress): Item {
  return {
    ...keyOf(FAN_OUT_PK, fanOutSortKey(progress)),
    ...(progress.tenant === undefined ? {} : { tenant: { S: progress.tenant } }),
    effect_id: { S: progress.effectId },
    mode: { S: progress.mode },
    tag: { S: progress.tag },
    regenerate: { BOOL: progress.regenerate },
    cursor: { S: progress.cursor },
    ...(progress.movedFrom === undefined ? {} : { moved_from: { S: progress.movedFrom } }),
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
    ...(item.moved_from?.S === undefined ? {} : { movedFrom: item.moved_from.S }),
    updatedAtMs: num(item, 'updated_at_ms') ?? 0,
    marked: num(item, 'marked') ?? 0,
  };
}
