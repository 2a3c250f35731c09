import type { TagIndex, TagPageCount } from '../../core/page/ports.js';
import type { TagRevalidations } from '../../core/revalidate/ports.js';
import type { MemoryTable } from '../shared/memory-table.js';

const tagKey = (tenant: string | undefined, tag: string) => `TAG#${tenant ?? '_'}#${tag}`;

/** The tag -> page index in memory, both sides (publishers', and revalidations'). */
export class InMemoryTagIndex implements TagIndex, TagRevalidations {
  constructor(readonly state: MemoryTable) {}

  add(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<void> {
    for (const tag of tags) {
      const pages = this.state.tagPages.get(tagKey(tenant, tag)) ?? new Set<string>();
      pages.add(pk);
      this.state.tagPages.set(tagKey(tenant, tag), pages);
    }
    return Promise.resolve();
  }

  /** Exact up to `limit`; past it the true size, as the DynamoDB adapter's estimate aims at. */
  countPages(tenant: string | undefined, tag: string, limit: number): Promise<TagPageCount> {
    const size = this.state.tagPages.get(tagKey(tenant, tag))?.size ?? 0;
    return Promise.resolve({ count: size, exact: size <= limit });
  }

  /** Each row goes only while META does not carry its tag and no LOCK is held, as on DynamoDB. */
  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    const removed: string[] = [];
    for (const tag of new Set(tags)) {
      if (this.state.metas.get(pk)?.tags?.includes(tag) === true) continue;
      if (this.state.locks.has(pk)) continue;
      this.state.tagPages.get(tagKey(tenant, tag))?.delete(pk);
      removed.push(tag);
    }
    return Promise.resolve(removed);
  }

  /**
   * Pages of `limit` pks (2 by default, so tests cross pages), in key order. The cursor is the
   * last pk read, as DynamoDB's start key: rows removed behind it shift nothing.
   */
  pages(tenant: string | undefined, tag: string, cursor?: string, limit = 2) {
    const all = [...(this.state.tagPages.get(tagKey(tenant, tag)) ?? [])].sort();
    const after = cursor === undefined ? all : all.filter((pk) => pk > cursor);
    const page = after.slice(0, limit);
    const next = after.length > limit ? page[page.length - 1] : undefined;
    return Promise.resolve({ pks: page, next });
  }

  recordRevalidation(
    tenant: string | undefined,
    tag: string,
    input: { effectId: string; atMs: number },
  ): Promise<void> {
    this.state.tagRevalidatedAt.set(tagKey(tenant, tag), input.atMs);
    return Promise.resolve();
  }

  revalidatedAt(tenant: string | undefined, tags: readonly string[]) {
    const found = new Map<string, number>();
    for (const tag of tags) {
      const at = this.state.tagRevalidatedAt.get(tagKey(tenant, tag));
      if (at !== undefined) found.set(tag, at);
    }
    return Promise.resolve(found);
  }
}
