import { BatchWriteItemCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { systemClock, type Clock } from '../../core/clock.js';
import type { TagIndex, TagPageCount } from '../../core/page/ports.js';
import { systemRandom, type Random } from '../../core/random.js';
import { keyOf } from '../shared/dynamodb/items.js';
import {
  countTagPages,
  MAX_ROUNDS,
  PAGE,
  readTagStates,
  removePageRows,
  tagPartition,
  unprocessedBackoff,
} from '../shared/dynamodb/tag-rows.js';
import { DynamoTableAdapter, type TableOptions } from '../shared/dynamodb/table.js';

const WRITE_BATCH = 25;

/**
 * The tag -> page index on the cache table, as publishers keep it (the revalidation's side is
 * `tag-revalidations/`). Rows are small and bounded by pages x tags; a page keeps a row per tag
 * it carries, so a revalidation reads one partition per tag.
 */
export class DynamoTagIndex extends DynamoTableAdapter implements TagIndex {
  readonly #backoff: (round: number) => Promise<void>;

  /** `clock` and `random` time the backoff of a retried batch. @default the system's */
  constructor(
    options: TableOptions & {
      clock?: Clock | undefined;
      random?: Random | undefined;
    },
  ) {
    super(options);
    this.#backoff = unprocessedBackoff(
      options.clock ?? systemClock,
      options.random ?? systemRandom,
    );
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
    return countTagPages(this.db, this.table, { tenant, tag, limit });
  }

  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    return removePageRows(this.db, this.table, { tenant, pk, tags });
  }

  revalidatedAt(tenant: string | undefined, tags: readonly string[]) {
    return readTagStates(this.db, this.table, { tenant, tags }, this.#backoff);
  }

  /** Batch writes, 25 at a time, until DynamoDB has processed every one (it may throttle some). */
  async #write(requests: WriteRequest[]): Promise<void> {
    for (let start = 0; start < requests.length; start += WRITE_BATCH) {
      let pending = requests.slice(start, start + WRITE_BATCH);
      for (let round = 0; pending.length > 0; round++) {
        if (round >= MAX_ROUNDS) throw new Error('tag index writes stayed unprocessed');
        const { UnprocessedItems } = await this.db.send(
          new BatchWriteItemCommand({ RequestItems: { [this.table]: pending } }),
        );
        pending = UnprocessedItems?.[this.table] ?? [];
        if (pending.length > 0) await this.#backoff(round);
      }
    }
  }
}
