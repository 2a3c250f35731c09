import type { InProgressEntry, RevalidationsInProgress } from '../../core/page/ports.js';
import type { MemoryTable } from '../shared/memory-table.js';
import { inProgressPartition } from './keys.js';

/** The in-progress rows in memory, with the DynamoDB adapter's conditions. */
export class InMemoryRevalidationsInProgress implements RevalidationsInProgress {
  /** Reads made (the origin's, counted for the HIT-path tests). */
  reads = 0;

  constructor(readonly state: MemoryTable) {}

  begin(
    tenant: string | undefined,
    shards: number,
    entry: InProgressEntry & { readonly key: string },
  ): Promise<void> {
    const rows = rowsOf(this.state, tenant, shards);
    // The last writer owns the entry, and its time never goes back.
    const later = rows.map((entries) => {
      const held = entries.get(entry.key)?.atMs;
      return held !== undefined && held > entry.atMs ? held + 1 : entry.atMs;
    });
    const atMs = Math.max(entry.atMs, ...later);
    for (const entries of rows) entries.set(entry.key, { atMs, effectId: entry.effectId });
    return Promise.resolve();
  }

  end(tenant: string | undefined, shards: number, key: string, effectId: string): Promise<boolean> {
    const rows = rowsOf(this.state, tenant, shards);
    if (rows.some((entries) => entries.get(key)?.effectId !== effectId)) {
      return Promise.resolve(false);
    }
    for (const entries of rows) entries.delete(key);
    return Promise.resolve(true);
  }

  read(tenant: string | undefined, shard: number): Promise<ReadonlyMap<string, InProgressEntry>> {
    this.reads += 1;
    const entries = this.state.inProgress.get(inProgressPartition(tenant, shard));
    return Promise.resolve(new Map(entries ?? []));
  }
}

/** The entries of every shard, each row made when absent. */
function rowsOf(
  state: MemoryTable,
  tenant: string | undefined,
  shards: number,
): Map<string, InProgressEntry>[] {
  return Array.from({ length: shards }, (_, shard) => {
    const id = inProgressPartition(tenant, shard);
    const entries = state.inProgress.get(id) ?? new Map<string, InProgressEntry>();
    state.inProgress.set(id, entries);
    return entries;
  });
}
