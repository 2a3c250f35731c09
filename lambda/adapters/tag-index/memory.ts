import type { TagIndex, TagPageCount } from '../../core/page/ports.js';
import { MemoryTable } from '../shared/memory-table.js';

/** The tag -> page index in memory, as publishers keep it (revalidations': `tag-revalidations/`). */
export class InMemoryTagIndex implements TagIndex {
  constructor(readonly state: MemoryTable) {}

  add(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<void> {
    for (const tag of tags) {
      const key = MemoryTable.tagKey(tenant, tag);
      const pages = this.state.tagPages.get(key) ?? new Set<string>();
      pages.add(pk);
      this.state.tagPages.set(key, pages);
    }
    return Promise.resolve();
  }

  countPages(tenant: string | undefined, tag: string, limit: number): Promise<TagPageCount> {
    return Promise.resolve(this.state.countTagPages(tenant, tag, limit));
  }

  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]> {
    return Promise.resolve(this.state.removeTagRows(tenant, pk, tags));
  }

  revalidatedAt(tenant: string | undefined, tags: readonly string[]) {
    return Promise.resolve(this.state.tagTimes(tenant, tags));
  }
}
