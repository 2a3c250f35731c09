/**
 * Pending CDN purges as rows of the cache table: `pk = CDN#PENDING`, `sk = <recorded at, 13-digit
 * epoch ms>#<purge id>`, so a Query reads them oldest first. Written by whoever purges (only when
 * CloudFront throttled it past its backoff), deleted by `retryPendingPurges` once CloudFront
 * accepts it, or moved to `REFUSED#<sk>` when CloudFront refuses it for good. Growth is bounded
 * by the sweeper; `ttl` (long after any retry would matter) is garbage collection only. One partition: rows exist only while CloudFront is saturated, far below
 * a partition's write rate.
 */
import {
  DeleteItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { PendingPurge, PendingPurges } from '../../core/operate/ports.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { Guard, namesOf } from '../shared/dynamodb/conditions.js';
import { keyOf, num, str, type Item } from '../shared/dynamodb/items.js';
import { PENDING_PURGES_PK } from '../../core/page/rows.js';
import { ExpiringRowsAdapter } from '../shared/dynamodb/table.js';

export { PENDING_PURGES_PK } from '../../core/page/rows.js';

/** Sorted by when the purge was first recorded, then by its id (two in one ms). */
export const pendingPurgeSortKey = (purge: Pick<PendingPurge, 'recordedAt' | 'id'>): string =>
  `${String(purge.recordedAt).padStart(13, '0')}#${purge.id}`;

/**
 * A purge the CDN refused for good, set aside in the same partition: it sorts after every
 * pending row (which starts with a digit), and `oldest` never reads it.
 */
export const REFUSED_PURGE_PREFIX = 'REFUSED#';
export const refusedPurgeSortKey = (purge: Pick<PendingPurge, 'recordedAt' | 'id'>): string =>
  `${REFUSED_PURGE_PREFIX}${pendingPurgeSortKey(purge)}`;
/** Pending rows' sort keys are 13 digits, `#`, the id: all of them lie in this range. */
const PENDING_RANGE = ['0', '9~'] as const;

export class DynamoPendingPurges extends ExpiringRowsAdapter implements PendingPurges {
  async add(purge: PendingPurge): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: this.#toItem(purge),
          // Recorded once: a repeated add (a retried call) leaves the row and its attempts alone.
          ConditionExpression: Guard.rowAbsent,
          ExpressionAttributeNames: namesOf(Guard.rowAbsent),
        }),
      ),
    );
  }

  async oldest(limit: number): Promise<PendingPurge[]> {
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :first AND :last',
        ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
        ExpressionAttributeValues: {
          ':pk': { S: PENDING_PURGES_PK },
          ':first': { S: PENDING_RANGE[0] },
          ':last': { S: PENDING_RANGE[1] },
        },
        ScanIndexForward: true,
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (Items ?? []).map(itemToPurge);
  }

  async recordAttempt(purge: PendingPurge, input: { reason: string; at: number }): Promise<void> {
    const update = 'SET #reason = :reason, #last_attempt_at = :at ADD #attempts :one';
    await conditionalWrite(
      this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(PENDING_PURGES_PK, pendingPurgeSortKey(purge)),
          UpdateExpression: update,
          // Never recreates a row another sweeper removed after the CDN accepted it.
          ConditionExpression: Guard.rowExists,
          ExpressionAttributeNames: namesOf(update, Guard.rowExists),
          ExpressionAttributeValues: {
            ':reason': { S: input.reason },
            ':at': { N: String(input.at) },
            ':one': { N: '1' },
          },
        }),
      ),
    );
  }

  /** The refused row first, then the pending one goes: a crash between leaves both, never none. */
  async refuse(purge: PendingPurge, input: { reason: string; at: number }): Promise<void> {
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
        Item: {
          ...this.#toItem({ ...purge, reason: input.reason, attempts: purge.attempts + 1 }),
          ...keyOf(PENDING_PURGES_PK, refusedPurgeSortKey(purge)),
          refused_at: { N: String(input.at) },
        },
      }),
    );
    await this.remove(purge);
  }

  async remove(purge: PendingPurge): Promise<void> {
    await this.db.send(
      new DeleteItemCommand({
        TableName: this.table,
        Key: keyOf(PENDING_PURGES_PK, pendingPurgeSortKey(purge)),
      }),
    );
  }

  #toItem(purge: PendingPurge): Item {
    return {
      ...keyOf(PENDING_PURGES_PK, pendingPurgeSortKey(purge)),
      purge_id: { S: purge.id },
      // A list, not a string set: a set cannot be empty and would lose the sent order.
      tags: { L: purge.tags.map((tag) => ({ S: tag })) },
      reason: { S: purge.reason },
      recorded_at: { N: String(purge.recordedAt) },
      attempts: { N: String(purge.attempts) },
      ttl: { N: String(this.ttlAfter(purge.recordedAt)) },
    };
  }
}

const itemToPurge = (item: Item): PendingPurge => ({
  id: str(item, 'purge_id') ?? '',
  tags: (item.tags?.L ?? []).flatMap((value) => (value.S === undefined ? [] : [value.S])),
  reason: str(item, 'reason') ?? '',
  recordedAt: num(item, 'recorded_at') ?? 0,
  attempts: num(item, 'attempts') ?? 0,
});
