import type { TagPageCount } from '../../core/page/ports.js';
import type { TagRevalidations } from '../../core/revalidate/ports.js';
import type { TagTimesReader } from '../../core/revalidate/tag-times.js';
import { MemoryTable } from '../shared/memory-table.js';

/**
 * The tag index in memory as a revalidation walks it and records its times, over the same state
 * as `InMemoryTagIndex` (publishers' side), as both adapters share one table on DynamoDB.
 */
export class InMemoryTagRevalidations implements TagRevalidations, TagTimesReader {
  constructor(readonly state: MemoryTable) {}

  /**
   * Pages of `limit` pks (2 by default, so tests cross pages), in key order. The cursor is the
   * last pk read, as DynamoDB's start key: rows removed behind it shift nothing.
   */
  pages(tenant: string | undefined, tag: string, cursor?: string, limit = 2) {
    const all = [...(this.state.tagPages.get(MemoryTable.tagKey(tenant, tag)) ?? [])].sort();
    const after = cursor === undefined ? all : all.filter((pk) => pk > cursor);
    const page = after.slice(0, limit);
    const next = after.length > limit ? page[page.length - 1] : undefined;
    return Promise.resolve({ pks: page, next });
  }

  countPages(tenant: string | undefined, tag: string, limit: number): Promise<TagPageCount> {
    return Promise.resolve(this.state.countTagPages(tenant, tag, limit));
  }

  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    return Promise.resolve(this.state.removeTagRows(tenant, pk, tags));
  }

  recordRevalidation(
    tenant: string | undefined,
    tag: string,
    input: { effectId: string; atMs: number },
  ): Promise<void> {
    this.state.tagRevalidatedAt.set(MemoryTable.tagKey(tenant, tag), input.atMs);
    return Promise.resolve();
  }

  revalidatedAt(tenant: string | undefined, tags: readonly string[]) {
    return Promise.resolve(this.state.tagTimes(tenant, tags));
  }
}
