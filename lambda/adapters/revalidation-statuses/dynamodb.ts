/**
 * A revalidation's status as one row of the cache table: `pk = REVALIDATION#<effect id>`,
 * `sk = STATUS`, so a status GET is one strongly consistent GetItem and statuses never share a
 * partition. The status is kept as JSON (`detail`): only this service reads it. Fan-out batches
 * add their counts beside it with `ADD` (`added_marked`, `added_regenerations`, `fan_outs` counted
 * down, `done_at_ms` of the last to finish), each in the transaction that moves its cursor
 * (`fan-out-progress-rows/dynamodb.ts`), so concurrent batches never overwrite each other and none
 * counts twice; the effect is done once `fan_outs` is 0. `ttl` matches the REQ# row of the key that made
 * it, so the effect id is known exactly as long as its key is.
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { RevalidationStatus, RevalidationStatuses } from '../../core/revalidate/ports.js';
import type { TagPageCount } from '../../core/page/ports.js';
import { conditionalWrite, conflictAware } from '../shared/dynamodb/conditional-write.js';
import { Guard, namesOf } from '../shared/dynamodb/conditions.js';
import { keyOf, num, type Item } from '../shared/dynamodb/items.js';
import { ExpiringRowsAdapter } from '../shared/dynamodb/table.js';

export const REVALIDATION_STATUS_PREFIX = 'REVALIDATION#';
export const STATUS_SK = 'STATUS';
export const revalidationStatusPartition = (effectId: string): string =>
  `${REVALIDATION_STATUS_PREFIX}${effectId}`;

/** How long a status is kept. @default 7 days, as the revalidation's REQ# row */

export class DynamoRevalidationStatuses
  extends ExpiringRowsAdapter
  implements RevalidationStatuses
{
  async put(status: RevalidationStatus): Promise<void> {
    const ttl = this.ttlAfter(status.acceptedAtMs);
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
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
    const { Item } = await this.db.send(
      new GetItemCommand({
        TableName: this.table,
        Key: keyOf(revalidationStatusPartition(effectId), STATUS_SK),
        ConsistentRead: true,
      }),
    );
    const detail = Item?.detail?.S;
    return detail === undefined
      ? undefined
      : withCounts(JSON.parse(detail) as RevalidationStatus, Item ?? {});
  }

  /**
   * @throws TransactionConflictError while a fan-out step's transaction counts on the row
   * (DynamoDB refuses the write, and the SDK does not retry it: transaction-apis.html)
   */
  async expect(effectId: string, expected: TagPageCount): Promise<void> {
    const write = this.#update(effectId, {
      UpdateExpression: 'SET expected_pages = :pages, expected_exact = :exact',
      ConditionExpression: Guard.rowExists,
      ExpressionAttributeNames: namesOf(Guard.rowExists),
      ExpressionAttributeValues: {
        ':pages': { N: String(expected.count) },
        ':exact': { BOOL: expected.exact },
      },
    });
    await conditionalWrite(conflictAware(write, `the status of ${effectId}`));
  }

  #update(
    effectId: string,
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>,
  ) {
    return this.db.send(
      new UpdateItemCommand({
        ...input,
        TableName: this.table,
        Key: keyOf(revalidationStatusPartition(effectId), STATUS_SK),
      }),
    );
  }
}

/** The stored status with the counts batches added beside it. */
function withCounts(status: RevalidationStatus, item: Item): RevalidationStatus {
  const marked = num(item, 'added_marked') ?? 0;
  const regenerations = num(item, 'added_regenerations') ?? 0;
  const fanOuts = num(item, 'fan_outs');
  const doneAtMs = num(item, 'done_at_ms');
  const expectedPages = num(item, 'expected_pages');
  return {
    ...status,
    ...(expectedPages === undefined
      ? {}
      : { expected: { count: expectedPages, exact: item.expected_exact?.BOOL === true } }),
    pages: status.pages + marked,
    marked: status.marked + marked,
    regenerations: status.regenerations + regenerations,
    ...(fanOuts === undefined ? {} : { fanOuts }),
    // Every fan-out stamps `done_at_ms` as it finishes: the last one's is the effect's.
    ...(fanOuts !== undefined && fanOuts <= 0 && doneAtMs !== undefined
      ? { state: 'done' as const, doneAtMs }
      : {}),
  };
}
