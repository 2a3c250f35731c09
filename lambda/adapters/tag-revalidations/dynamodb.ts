import {
  PutItemCommand,
  QueryCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { systemClock, type Clock } from '../../core/clock.js';
import type { TagPageCount } from '../../core/page/ports.js';
import type { TagRevalidations } from '../../core/revalidate/ports.js';
import { keyOf, str } from '../shared/dynamodb/items.js';
import {
  countTagPages,
  PAGE,
  readTagStates,
  removePageRows,
  STATE,
  tagPagesQuery,
  tagPartition,
} from '../tag-index/dynamodb.js';
import type { TagTimesReader } from '../../core/revalidate/tag-times.js';

/**
 * How long a tag's revalidation time is kept. It only has to outlive a render in flight (which
 * compares it with when it started, within a lease), so a week is ample; DynamoDB TTL then
 * removes the row of a tag nobody revalidates again.
 */
export const TAG_STATE_TTL_SECONDS = 7 * 86_400;

/**
 * The tag index as a revalidation reads it, where it records each tag's revalidation, and where
 * a data cache reads those times back (`core/revalidate/tag-times.ts`).
 */
export class DynamoTagRevalidations implements TagRevalidations, TagTimesReader {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #pageSize: number | undefined;
  readonly #clock: Clock;

  /**
   * `pageSize`: rows per `pages()` call (default: what DynamoDB returns, up to 1 MB); `clock`
   * times a throttled read's backoff. @default the system's
   */
  constructor(options: {
    client: DynamoDBClient;
    tableName: string;
    pageSize?: number;
    clock?: Clock | undefined;
  }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#pageSize = options.pageSize;
    this.#clock = options.clock ?? systemClock;
  }

  async pages(tenant: string | undefined, tag: string, cursor?: string, limit?: number) {
    const { Items, LastEvaluatedKey } = await this.#client.send(
      new QueryCommand({
        TableName: this.#tableName,
        ...tagPagesQuery(tenant, tag),
        ProjectionExpression: '#sk',
        ConsistentRead: true,
        Limit: limit ?? this.#pageSize,
        ExclusiveStartKey: cursor === undefined ? undefined : decodeCursor(cursor),
      }),
    );
    return {
      pks: (Items ?? []).map((item) => (str(item, 'sk') ?? '').slice(PAGE.length)),
      next: LastEvaluatedKey === undefined ? undefined : encodeCursor(LastEvaluatedKey),
    };
  }

  countPages(tenant: string | undefined, tag: string, limit: number): Promise<TagPageCount> {
    return countTagPages(this.#client, this.#tableName, { tenant, tag, limit });
  }

  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    return removePageRows(this.#client, this.#tableName, { tenant, pk, tags });
  }

  /** BatchGetItem of the tags' `STATE` rows; a throttled batch is read again after 50-100 ms. */
  revalidatedAt(tenant: string | undefined, tags: readonly string[]): Promise<Map<string, number>> {
    return readTagStates(this.#client, this.#tableName, { tenant, tags }, (round) =>
      this.#clock.sleep(50 * 2 ** round),
    );
  }

  async recordRevalidation(
    tenant: string | undefined,
    tag: string,
    input: { effectId: string; atMs: number },
  ): Promise<void> {
    await this.#client.send(
      new PutItemCommand({
        TableName: this.#tableName,
        Item: {
          ...keyOf(tagPartition(tenant, tag), STATE),
          revalidated_at_ms: { N: String(input.atMs) },
          revalidated_by: { S: input.effectId },
          ttl: { N: String(Math.floor(input.atMs / 1000) + TAG_STATE_TTL_SECONDS) },
        },
      }),
    );
  }
}

const encodeCursor = (key: Record<string, AttributeValue>): string =>
  Buffer.from(JSON.stringify(key)).toString('base64url');
const decodeCursor = (cursor: string): Record<string, AttributeValue> =>
  JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, AttributeValue>;
