import type { InProgressEntry, RevalidationsInProgress } from '../../core/ports.js';
import type { MemoryTable } from '../shared/memory-table.js';
import { inProgressPartition } from './keys.js';

/** The in-progress rows in memory, with the DynamoDB adapter's conditions. */
export class InMemoryRevalidationsInProgress implements RevalidationsInProgress {
  /** Reads made (the origin's, counted for the HIT-path tests). */
  reads = 0;

  constructor(readonly state: MemoryTable) {}

  begin(
    tenant: string | undefined,
    shard: number,
    entry: InProgressEntry & { readonly key: string },
  ): Promise<void> {
    const id = inProgressPartition(tenant, shard);
    const entries = this.state.inProgress.get(id) ?? new Map<string, InProgressEntry>();
    const held = entries.get(entry.key);
    // The later time wins: an older revalidation never replaces a newer one's entry.
    if (held === undefined || held.atMs < entry.atMs) {
      entries.set(entry.key, { atMs: entry.atMs, effectId: entry.effectId });
    }
    this.state.inProgress.set(id, entries);
    return Promise.resolve();
  }

  end(tenant: string | undefined, shard: number, key: string, effectId: string): Promise<boolean> {
    const entries = this.state.inProgress.get(inProgressPartition(tenant, shard));
    if (entries?.get(key)?.effectId !== effectId) return Promise.resolve(false);
    entries.delete(key);
    return Promise.resolve(true);
  }

  read(tenant: string | undefined, shard: number): Promise<ReadonlyMap<string, InProgressEntry>> {
    this.reads += 1;
    const entries = this.state.inProgress.get(inProgressPartition(tenant, shard));
    return Promise.resolve(new Map(entries ?? []));
  }
}
