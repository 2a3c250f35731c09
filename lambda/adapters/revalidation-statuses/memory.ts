import type {
  RevalidationStatus,
  RevalidationStatuses,
  StepCounts,
} from '../../core/revalidate/ports.js';
import type { TagPageCount } from '../../core/page/ports.js';

/**
 * A status as the DynamoDB row keeps it: the detail a `put` (or a fan-out start) writes, and
 * beside it what fan-out steps add, so replacing the detail keeps their counts.
 */
interface StatusRow {
  detail: RevalidationStatus | undefined;
  marked: number;
  regenerations: number;
  fanOuts: number | undefined;
  doneAtMs: number | undefined;
  expected: TagPageCount | undefined;
  /** Tags whose fan-out this effect started (`FanOutStarts`). */
  started: Set<string>;
}

const bareRow = (): StatusRow => ({
  detail: undefined,
  marked: 0,
  regenerations: 0,
  fanOuts: undefined,
  doneAtMs: undefined,
  expected: undefined,
  started: new Set(),
});

/** Revalidation statuses in memory, by effect id. */
export class InMemoryRevalidationStatuses implements RevalidationStatuses {
  readonly #rows = new Map<string, StatusRow>();

  put(status: RevalidationStatus): Promise<void> {
    this.#rows.set(status.effectId, { ...bareRow(), detail: status, fanOuts: status.fanOuts });
    return Promise.resolve();
  }

  get(effectId: string): Promise<RevalidationStatus | undefined> {
    const row = this.#rows.get(effectId);
    if (row?.detail === undefined) return Promise.resolve(undefined);
    const { detail, fanOuts, doneAtMs } = row;
    return Promise.resolve({
      ...detail,
      ...(row.expected === undefined ? {} : { expected: row.expected }),
      pages: detail.pages + row.marked,
      marked: detail.marked + row.marked,
      regenerations: detail.regenerations + row.regenerations,
      ...(fanOuts === undefined ? {} : { fanOuts }),
      ...(fanOuts !== undefined && fanOuts <= 0 && doneAtMs !== undefined
        ? { state: 'done' as const, doneAtMs }
        : {}),
    });
  }

  expect(effectId: string, expected: TagPageCount): Promise<void> {
    const row = this.#rows.get(effectId);
    if (row !== undefined) row.expected = expected;
    return Promise.resolve();
  }

  /**
   * Adds counts and, with `finishedAtMs`, counts one fan-out down (the last makes it `done`):
   * the status half of `InMemoryFanOutProgressRows`'s moves. On a status gone, a bare row.
   */
  count(effectId: string, counts: StepCounts, finishedAtMs?: number): void {
    const row = this.#rowOf(effectId);
    row.marked += counts.marked;
    row.regenerations += counts.regenerations;
    if (finishedAtMs === undefined) return;
    row.fanOuts = (row.fanOuts ?? 0) - 1;
    row.doneAtMs = finishedAtMs;
  }

  /** The tags of `status`'s effect whose fan-out started before. */
  started(effectId: string): ReadonlySet<string> {
    return this.#rows.get(effectId)?.started ?? new Set();
  }

  /** The status half of `InMemoryFanOutStarts.start`: the detail, and these fan-outs counted. */
  startFanOuts(status: RevalidationStatus, tags: readonly string[]): void {
    const row = this.#rowOf(status.effectId);
    row.detail = status;
    row.fanOuts = (row.fanOuts ?? 0) + tags.length;
    for (const tag of tags) row.started.add(tag);
  }

  #rowOf(effectId: string): StatusRow {
    const row = this.#rows.get(effectId) ?? bareRow();
    this.#rows.set(effectId, row);
    return row;
  }
}
