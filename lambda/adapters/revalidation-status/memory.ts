import type {
  RevalidationStatus,
  RevalidationStatuses,
  StepCounts,
} from '../../core/revalidate/ports.js';
import type { TagPageCount } from '../../core/page/ports.js';

/** Revalidation statuses in memory, by effect id. */
export class InMemoryRevalidationStatuses implements RevalidationStatuses {
  readonly rows = new Map<string, RevalidationStatus>();

  put(status: RevalidationStatus): Promise<void> {
    this.rows.set(status.effectId, status);
    return Promise.resolve();
  }

  get(effectId: string): Promise<RevalidationStatus | undefined> {
    return Promise.resolve(this.rows.get(effectId));
  }

  expect(effectId: string, expected: TagPageCount): Promise<void> {
    const row = this.rows.get(effectId);
    if (row !== undefined) this.rows.set(effectId, { ...row, expected });
    return Promise.resolve();
  }

  /**
   * Adds counts to an existing status and, with `finishedAtMs`, counts one fan-out down (the
   * last makes it `done`): the status half of `InMemoryFanOutProgressRows`'s moves.
   */
  count(effectId: string, counts: StepCounts, finishedAtMs?: number): void {
    const row = this.rows.get(effectId);
    if (row === undefined) return;
    const fanOuts = finishedAtMs === undefined ? row.fanOuts : (row.fanOuts ?? 1) - 1;
    const done =
      finishedAtMs !== undefined && (fanOuts ?? 0) <= 0
        ? { state: 'done' as const, doneAtMs: finishedAtMs }
        : {};
    this.rows.set(effectId, {
      ...row,
      pages: row.pages + counts.marked,
      marked: row.marked + counts.marked,
      regenerations: row.regenerations + counts.regenerations,
      ...(fanOuts === undefined ? {} : { fanOuts }),
      ...done,
    });
  }
}
