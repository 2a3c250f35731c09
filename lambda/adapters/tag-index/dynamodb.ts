import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  type DynamoDBClient,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { systemClock, type Clock } from '../../core/clock.js';
import type { TagIndex, TagPageCount, TagRowRemoval } from '../../core/page/ports.js';
import { systemRandom, type Random } from '../../core/random.js';
import { Guard, namesOf } from '../shared/dynamodb/conditions.js';
import { keyOf, num, str, type Item } from '../shared/dynamodb/items.js';
import { SortKey } from '../../core/page/rows.js';

/** `TAG#<tenant or _>#<tag>`: one partition per tag and tenant, so tenants never mix. */
export const tagPartition = (tenant: string | undefined, tag: string): string =>
  `TAG#${tenant ?? '_'}#${tag}`;
export const PAGE = 'PAGE#';
export const STATE = 'STATE';
const WRITE_BATCH = 25;
const READ_BATCH = 100;
const MAX_ROUNDS = 8;

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
 * The tag -> page index on the cache table, as publishers keep it (the revalidation's side is
 * `tag-revalidations.ts`). Rows are small and bounded by pages x tags; a page keeps a row per tag
 * it carries, so a revalidation reads one partition per tag.
 */
export class DynamoTagIndex implements TagIndex {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #clock: Clock;
  readonly #random: Random;

  /** `clock` and `random` time the backoff of a retried batch. @default the system's */
  constructor(options: {
    client: DynamoDBClient;
    tableName: string;
    clock?: Clock | undefined;
    random?: Random | undefined;
  }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? systemRandom;
  }

  async add(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<void> {
    await this.#write(
      tags.map((tag) => ({
        PutRequest: { Item: { ...keyOf(tagPartition(tenant, tag), `${PAGE}${pk}`) } },
      })),
    );
  }

  /** One Query with `Select: COUNT`, at most `limit` rows read (eventually consistent: a bound). */
  countPages(tenant: string | undefined, tag: string, limit: number): Promise<TagPageCount> {
    return countTagPages(this.#client, this.#tableName, { tenant, tag, limit });
  }

  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    return removePageRows(this.#client, this.#tableName, { tenant, pk, tags });
  }

  revalidatedAt(tenant: string | undefined, tags: readonly string[]) {
    return readTagStates(this.#client, this.#tableName, { tenant, tags }, (round) =>
      this.#backoff(round),
    );
  }

  /** Waits before another round of what DynamoDB left unprocessed: growing, jittered. */
  #backoff(round: number): Promise<void> {
    return this.#clock.sleep(25 * 2 ** round * (1 + this.#random()));
  }

  /** Batch writes, 25 at a time, until DynamoDB has processed every one (it may throttle some). */
  async #write(requests: WriteRequest[]): Promise<void> {
    for (let start = 0; start < requests.length; start += WRITE_BATCH) {
      let pending = requests.slice(start, start + WRITE_BATCH);
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_ROUNDS) throw new Error('tag index writes stayed unprocessed');
        const { UnprocessedItems } = await this.#client.send(
          new BatchWriteItemCommand({ RequestItems: { [this.#tableName]: pending } }),
        );
        pending = UnprocessedItems?.[this.#tableName] ?? [];
        if (pending.length > 0) await this.#backoff(round);
      }
    }
  }
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

/** The tag index as the sweeper uses it: only the guarded removal of a gone page's rows. */
export class DynamoTagRows implements TagRowRemoval {
  constructor(readonly options: { readonly client: DynamoDBClient; readonly tableName: string }) {}

  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    return removePageRows(this.options.client, this.options.tableName, { tenant, pk, tags });
  }
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
