import type {
  FanOutProgress,
  FanOutProgressRows,
  StepCounts,
} from '../../core/revalidate/ports.js';
import type { InMemoryRevalidationStatuses } from '../revalidation-status/memory.js';
import type { MemoryTable } from '../shared/memory-table.js';
import { fanOutSortKey } from './keys.js';

/**
 * The fan-out progress rows in memory, with the DynamoDB adapter's cursor conditions; each move
 * counts its batch on `statuses` at once (the adapter's transaction).
 */
export class InMemoryFanOutProgressRows implements FanOutProgressRows {
  constructor(
    readonly state: MemoryTable,
    readonly statuses: InMemoryRevalidationStatuses,
  ) {}

  start(progress: FanOutProgress): Promise<void> {
    this.state.fanOuts.set(fanOutSortKey(progress), progress);
    return Promise.resolve();
  }

  get(progress: Pick<FanOutProgress, 'tenant' | 'effectId' | 'mode' | 'tag'>) {
    return Promise.resolve(this.state.fanOuts.get(fanOutSortKey(progress)));
  }

  advance(
    progress: FanOutProgress,
    input: { from: string; to: string; counts: StepCounts; atMs: number },
  ): Promise<boolean> {
    const sk = fanOutSortKey(progress);
    const row = this.state.fanOuts.get(sk);
    if (row?.cursor !== input.from) return Promise.resolve(false);
    const marked = row.marked + input.counts.marked;
    this.state.fanOuts.set(sk, { ...row, cursor: input.to, updatedAtMs: input.atMs, marked });
    this.statuses.count(progress.effectId, input.counts);
    return Promise.resolve(true);
  }

  finish(
    progress: FanOutProgress,
    input: { from: string; counts: StepCounts; atMs: number },
  ): Promise<boolean> {
    const sk = fanOutSortKey(progress);
    if (this.state.fanOuts.get(sk)?.cursor !== input.from) return Promise.resolve(false);
    this.state.fanOuts.delete(sk);
    this.statuses.count(progress.effectId, input.counts, input.atMs);
    return Promise.resolve(true);
  }

  stalled(beforeMs: number, limit: number): Promise<FanOutProgress[]> {
    const rows = [...this.state.fanOuts.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    const old = rows.map(([, row]) => row).filter((row) => row.updatedAtMs < beforeMs);
    return Promise.resolve(old.slice(0, limit));
  }
}
