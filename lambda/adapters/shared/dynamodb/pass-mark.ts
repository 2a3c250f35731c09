/**
 * The hit-for-pass mark on DynamoDB: its row (`META#PASS`, beside META), the one Query that reads
 * both, and the transaction that writes it under the lease. Used by `DynamoCacheTable`.
 */
import { QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { MarkPassInput } from '../../../core/page/ports.js';
import type { PageRows, PassMark } from '../../../core/page/model.js';
import { SortKey } from '../../../core/page/rows.js';
import { putInPlaceOfPublish } from './cancellation.js';
import { itemToGone } from './gone-page.js';
import { itemToMeta, keyOf, num, str, type Item } from './items.js';

/** The mark as a row: extra attributes only (`until`, `reason`, `marked_at`, `ttl`). */
export const passMarkToItem = (mark: PassMark): Item => ({
  ...keyOf(mark.pk, SortKey.Pass),
  until: { N: String(mark.until) },
  reason: { S: mark.reason },
  marked_at: { N: String(mark.markedAt) },
  ...(mark.cacheKey === undefined ? {} : { cache_key: { S: mark.cacheKey } }),
  ...(mark.ttl === undefined ? {} : { ttl: { N: String(mark.ttl) } }),
});

export const itemToPassMark = (item: Item): PassMark => ({
  pk: str(item, 'pk') ?? '',
  until: num(item, 'until') ?? 0,
  reason: str(item, 'reason') ?? '',
  markedAt: num(item, 'marked_at') ?? 0,
  cacheKey: str(item, 'cache_key'),
  ttl: num(item, 'ttl'),
});

/**
 * META, META#PASS and a gone path's META#GONE in one strongly consistent Query (1 RCU while they
 * fit in 4 KB; a path has a gone row only while it has no META).
 */
export async function readPageRows(
  client: DynamoDBClient,
  tableName: string,
  pk: string,
): Promise<PageRows> {
  const { Items = [] } = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :meta)',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':pk': { S: pk }, ':meta': { S: SortKey.Meta } },
      ConsistentRead: true,
    }),
  );
  const meta = Items.find((item) => str(item, 'sk') === SortKey.Meta);
  const pass = Items.find((item) => str(item, 'sk') === SortKey.Pass);
  const gone = Items.find((item) => str(item, 'sk') === SortKey.Gone);
  return {
    meta: meta === undefined ? undefined : itemToMeta(meta),
    pass: pass === undefined ? undefined : itemToPassMark(pass),
    gone: gone === undefined ? undefined : itemToGone(gone),
  };
}

/**
 * Put META#PASS, Delete META, Delete LOCK on this caller's live, unmarked lease: one
 * TransactWriteItems (6 WCU), once per key per `hitForPassSeconds`. No body is written.
 */
export async function writePassMark(
  client: DynamoDBClient,
  tableName: string,
  input: MarkPassInput,
): Promise<void> {
  const { lease, mark } = input;
  const deleteMeta = { Delete: { TableName: tableName, Key: keyOf(lease.pk, SortKey.Meta) } };
  const row = { what: 'mark', pk: mark.pk, item: passMarkToItem(mark) };
  return putInPlaceOfPublish(client, tableName, input, row, [deleteMeta]);
}
