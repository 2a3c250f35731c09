import { PutItemCommand, QueryCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { systemClock, type Clock } from '../../core/clock.js';
import { systemRandom, type Random } from '../../core/random.js';
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
  unprocessedBackoff,
} from '../shared/dynamodb/tag-rows.js';
import type { TagTimesReader } from '../../core/revalidate/tag-times.js';
import { DynamoTableAdapter, type TableOptions } from '../shared/dynamodb/table.js';

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
export class DynamoTagRevalidations
  extends DynamoTableAdapter
  implements TagRevalidations, TagTimesReader
{
  readonly #pageSize: number | undefined;
  readonly #backoff: (round: number) => Promise<void>;

  /**
   * `pageSize`: rows per `pages()` call (default: what DynamoDB returns, up to 1 MB); `clock` and
   * `random` time a throttled read's backoff (the tag index's). @default the system's
   */
  constructor(
    options: TableOptions & {
      pageSize?: number;
      clock?: Clock | undefined;
      random?: Random | undefined;
    },
  ) {
    super(options);
    this.#pageSize = options.pageSize;
    this.#backoff = unprocessedBackoff(
      options.clock ?? systemClock,
      options.random ?? systemRandom,
    );
  }

  async pages(tenant: string | undefined, tag: string, cursor?: string, limit?: number) {
    const { Items, LastEvaluatedKey } = await this.db.send(
      new QueryCommand({
        TableName: this.table,
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
    return countTagPages(this.db, this.table, { tenant, tag, limit });
  }

  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    return removePageRows(this.db, this.table, { tenant, pk, tags });
  }

  /** BatchGetItem of the tags' `STATE` rows, as the tag index reads them. */
  revalidatedAt(tenant: string | undefined, tags: readonly string[]): Promise<Map<string, number>> {
    return readTagStates(this.db, this.table, { tenant, tags }, this.#backoff);
  }

  async recordRevalidation(
    tenant: string | undefined,
    tag: string,
    input: { effectId: string; atMs: number },
  ): Promise<void> {
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
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
