import type { FanOutProgress, FanOutProgressRows } from '../../core/ports.js';
import type { MemoryTable } from '../shared/memory-table.js';
import { fanOutSortKey } from './keys.js';

/** The fan-out progress rows in memory, with the DynamoDB adapter's cursor conditions. */
export class InMemoryFanOutProgressRows implements FanOutProgressRows {
  constructor(readonly state: MemoryTable) {}

  start(progress: FanOutProgress): Promise<void> {
    this.state.fanOuts.set(fanOutSortKey(progress), progress);
    return Promise.resolve();
  }

  get(progress: Pick<FanOutProgress, 'tenant' | 'effectId' | 'mode' | 'tag'>) {
    return Promise.resolve(this.state.fanOuts.get(fanOutSortKey(progress)));
  }

  advance(
    progress: FanOutProgress,
    input: { from: string; to: string; marked: number; atMs: number },
  ): Promise<boolean> {
    const sk = fanOutSortKey(progress);
    const row = this.state.fanOuts.get(sk);
    if (row?.cursor !== input.from) return Promise.resolve(false);
    const marked = row.marked + input.marked;
    this.state.fanOuts.set(sk, { ...row, cursor: input.to, updatedAtMs: input.atMs, marked });
    return Promise.resolve(true);
  }

  finish(progress: FanOutProgress, from: string): Promise<boolean> {
    const sk = fanOutSortKey(progress);
    if (this.state.fanOuts.get(sk)?.cursor !== from) return Promise.resolve(false);
    return Promise.resolve(this.state.fanOuts.delete(sk));
  }

  stalled(beforeMs: number, limit: number): Promise<FanOutProgress[]> {
    const rows = [...this.state.fanOuts.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    const old = rows.map(([, row]) => row).filter((row) => row.updatedAtMs < beforeMs);
    return Promise.resolve(old.slice(0, limit));
  }
}
