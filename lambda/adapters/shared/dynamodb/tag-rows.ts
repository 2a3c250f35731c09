/**
 * The tag index's rows on the cache table, as both its adapters read and write them: a tag's
 * partition (`TAG#<tenant>#<tag>`) holds a `PAGE#<pk>` row per page and one `STATE` row, when it
 * was last revalidated. Publishers keep the index (`tag-index/`), revalidations walk it
 * (`tag-revalidations/`); the count, the removal and the read of tag times are the same for both.
 */
import {
  BatchGetItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { TagPageCount, TagRowRemoval } from '../../../core/page/ports.js';
import { SortKey } from '../../../core/page/rows.js';
import type { Clock } from '../../../core/clock.js';
import type { Random } from '../../../core/random.js';
import { Guard, namesOf } from './conditions.js';
import { keyOf, num, str, type Item } from './items.js';
import type { TableOptions } from './table.js';

/** `TAG#<tenant or _>#<tag>`: one partition per tag and tenant, so tenants never mix. */
export const tagPartition = (tenant: string | undefined, tag: string): string =>
  `TAG#${tenant ?? '_'}#${tag}`;
/** The sort key prefix of a page's row under a tag. */
export const PAGE = 'PAGE#';
/** The sort key of a tag's revalidation time. */
export const STATE = 'STATE';
const READ_BATCH = 100;
/** How many rounds a batch call retries what DynamoDB left unprocessed before it gives up. */
export const MAX_ROUNDS = 8;

/**
 * The wait before another round of what DynamoDB left unprocessed in a batch read or write of
 * tag rows: 25 ms doubling each round, jittered up to twice that (AWS's exponential backoff with
 * jitter), so contenders throttled together do not come back together.
 */
export const unprocessedBackoff =
  (clock: Clock, random: Random) =>
  (round: number): Promise<void> =>
    clock.sleep(25 * 2 ** round * (1 + random()));

/** The key condition of a tag's page rows (`PAGE#<pk>` under `TAG#<tenant>#<tag>`). */
export const tagPagesQuery = (tenant: string | undefined, tag: string) => ({
  KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :page)',
  ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
  ExpressionAttributeValues: { ':pk': { S: tagPartition(tenant, tag) }, ':page': { S: PAGE } },
});

/**
 * A tag's pages in one small Query (its first `limit + 1` rows' keys, eventually consistent: a
 * count is for people and bounds, never for correctness): exact up to `limit`; past it an
 * estimate from where the last row read falls. A row's key ends in the SHA-256 of its page's
 * cache key, so rows spread evenly over the hash space: n rows up to a point 1/k of the way
 * through it make about n·k in all (within a few percent at n = 1,000).
 */
export async function countTagPages(
  client: DynamoDBClient,
  tableName: string,
  input: { tenant: string | undefined; tag: string; limit: number },
): Promise<TagPageCount> {
  const { Items, LastEvaluatedKey } = await client.send(
    new QueryCommand({
      TableName: tableName,
      ...tagPagesQuery(input.tenant, input.tag),
      ProjectionExpression: '#sk',
      // One row past the limit tells "exactly `limit`" from "more" (DynamoDB returns a start key
      // whenever it stops at `Limit`, more rows or not).
      Limit: input.limit + 1,
    }),
  );
  const rows = Items ?? [];
  if (rows.length <= input.limit && LastEvaluatedKey === undefined) {
    return { count: rows.length, exact: true };
  }
  const through = hashFraction(str(rows.at(-1) ?? {}, 'sk') ?? '');
  const estimate = through > 0 ? Math.round(rows.length / through) : rows.length;
  return { count: Math.max(input.limit, estimate), exact: false };
}

/** How far through the hash space a `PAGE#...CACHE#<sha256 hex>` key lies, in [0, 1]. */
function hashFraction(sk: string): number {
  const hex = /([0-9a-f]{13})[0-9a-f]*$/.exec(sk)?.[1];
  return hex === undefined ? 0 : (Number.parseInt(hex, 16) + 1) / 16 ** 13;
}

/**
 * When each of `tags` was last revalidated (epoch ms; never revalidated: absent): their `STATE`
 * rows, 100 keys per strongly consistent BatchGetItem, what DynamoDB leaves unprocessed read
 * again after `backoff(round)`, for at most 8 rounds.
 */
export async function readTagStates(
  client: DynamoDBClient,
  tableName: string,
  input: { tenant: string | undefined; tags: readonly string[] },
  backoff: (round: number) => Promise<void>,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const prefix = tagPartition(input.tenant, '');
  for (let start = 0; start < input.tags.length; start += READ_BATCH) {
    let keys: Item[] = input.tags
      .slice(start, start + READ_BATCH)
      .map((tag) => keyOf(tagPartition(input.tenant, tag), STATE));
    for (let round = 0; keys.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error('tag states stayed unprocessed');
      const { Responses, UnprocessedKeys } = await client.send(
        new BatchGetItemCommand({
          RequestItems: { [tableName]: { Keys: keys, ConsistentRead: true } },
        }),
      );
      for (const item of Responses?.[tableName] ?? []) {
        const at = num(item, 'revalidated_at_ms');
        if (at !== undefined) found.set((str(item, 'pk') ?? '').slice(prefix.length), at);
      }
      keys = UnprocessedKeys?.[tableName]?.Keys ?? [];
      if (keys.length > 0) await backoff(round);
    }
  }
  return found;
}

/**
 * `TagRowRemoval.remove` on DynamoDB: per tag, one TransactWriteItems of a ConditionCheck on
 * META (it does not carry the tag), a ConditionCheck on LOCK (nobody holds the lease) and the
 * Delete of the row. A cancelled one keeps its row: a publish carries the tag, a render may be
 * about to, or a conflict; a later remover (the tag's next revalidation, the sweeper) retries.
 * Cost: about 6 write units per tag removed, only when a page loses a tag or is gone.
 */
export async function removePageRows(
  client: DynamoDBClient,
  tableName: string,
  page: { tenant: string | undefined; pk: string; tags: readonly string[] },
): Promise<string[]> {
  const removed: string[] = [];
  for (const tag of new Set(page.tags)) {
    try {
      await client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: tableName,
                Key: keyOf(page.pk, SortKey.Meta),
                ConditionExpression: Guard.tagNotCarried,
                ExpressionAttributeNames: namesOf(Guard.tagNotCarried),
                ExpressionAttributeValues: { ':tag': { S: tag } },
              },
            },
            {
              ConditionCheck: {
                TableName: tableName,
                Key: keyOf(page.pk, SortKey.Lock),
                ConditionExpression: Guard.leaseAbsent,
                ExpressionAttributeNames: namesOf(Guard.leaseAbsent),
              },
            },
            {
              Delete: {
                TableName: tableName,
                Key: keyOf(tagPartition(page.tenant, tag), `${PAGE}${page.pk}`),
              },
            },
          ],
        }),
      );
      removed.push(tag);
    } catch (error) {
      if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') throw error;
    }
  }
  return removed;
}

/**
 * The removal alone, for a caller that needs nothing else of the index (the sweeper): its bundle
 * carries neither the index's writes nor its reads.
 */
export const tagRowRemoval = (table: TableOptions): TagRowRemoval => ({
  remove: (tenant, pk, tags) => removePageRows(table.client, table.tableName, { tenant, pk, tags }),
});
