import type { ResolveInput, StatusRow, WorkResolution } from '../../core/operate/ports.js';
import { MemoryTable } from '../shared/memory-table.js';
import type { InMemoryStatusIndex } from '../status-index-reader/memory.js';

/**
 * `WorkResolution` in memory: META from the shared table, the row taken out of the in-memory
 * status index (only while it is there as read, and its REQ# row, if kept, has that status).
 */
export class InMemoryWorkResolution implements WorkResolution {
  /** Rows resolved, by `pk`/`sk`, with what resolved them. */
  readonly resolved = new Map<string, ResolveInput>();

  constructor(
    private readonly state: MemoryTable,
    private readonly index: InMemoryStatusIndex,
  ) {}

  publishedAt(pk: string): Promise<number | undefined> {
    return Promise.resolve(this.state.metas.get(pk)?.generatedAt);
  }

  resolve(row: StatusRow, input: ResolveInput): Promise<boolean> {
    const request = this.state.requests.get(MemoryTable.requestId(row.pk, row.sk.slice(4)));
    if (request !== undefined && request.status !== input.status) return Promise.resolve(false);
    for (const [shard, rows] of this.index.shards) {
      const kept = rows.filter((r) => !(r.pk === row.pk && r.sk === row.sk && r.at === row.at));
      if (kept.length === rows.length) continue;
      this.index.shards.set(shard, kept);
      this.resolved.set(`${row.pk}/${row.sk}`, input);
      return Promise.resolve(true);
    }
    return Promise.resolve(false);
  }
}
