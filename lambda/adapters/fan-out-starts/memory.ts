import { inProgressKey } from '../../core/page/in-progress.js';
import type { FanOutStart, FanOutStarts } from '../../core/revalidate/ports.js';
import { fanOutSortKey } from '../fan-out-progress-rows/keys.js';
import { rowsOf } from '../revalidations-in-progress/memory.js';
import type { InMemoryRevalidationStatuses } from '../revalidation-statuses/memory.js';
import type { MemoryTable } from '../shared/memory-table.js';

/** Fan-out starts in memory, with the DynamoDB adapter's conditions (each start at once). */
export class InMemoryFanOutStarts implements FanOutStarts {
  constructor(
    readonly state: MemoryTable,
    readonly statuses: InMemoryRevalidationStatuses,
  ) {}

  start(start: FanOutStart): Promise<readonly string[]> {
    const { status, shards, atMs } = start;
    const before = this.statuses.started(status.effectId);
    const fresh = start.fanOuts.filter((fanOut) => !before.has(fanOut.tag));
    if (fresh.length === 0) return Promise.resolve([]);
    this.statuses.startFanOuts(
      status,
      fresh.map((fanOut) => fanOut.tag),
    );
    const rows = rowsOf(this.state, status.tenant, shards);
    for (const fanOut of fresh) {
      const key = inProgressKey(fanOut.mode, fanOut.tag);
      // The last writer owns the entry, and its time never goes back.
      const later = rows.map((entries) => {
        const held = entries.get(key)?.atMs;
        return held !== undefined && held > atMs ? held + 1 : atMs;
      });
      const entry = { atMs: Math.max(atMs, ...later), effectId: status.effectId };
      for (const entries of rows) entries.set(key, entry);
      this.state.fanOuts.set(fanOutSortKey(fanOut), fanOut);
    }
    return Promise.resolve(fresh.map((fanOut) => fanOut.tag));
  }
}
