import type { RevalidationStatus, RevalidationStatuses } from '../../core/ports.js';

/** Revalidation statuses in memory, by effect id. */
export class InMemoryRevalidationStatuses implements RevalidationStatuses {
  readonly rows = new Map<string, RevalidationStatus>();
  readonly #ended = new Map<string, Set<string>>();

  put(status: RevalidationStatus): Promise<void> {
    this.rows.set(status.effectId, status);
    this.#ended.delete(status.effectId);
    return Promise.resolve();
  }

  get(effectId: string): Promise<RevalidationStatus | undefined> {
    return Promise.resolve(this.rows.get(effectId));
  }

  addMarked(effectId: string, counts: { marked: number; regenerations: number }): Promise<void> {
    const row = this.rows.get(effectId);
    if (row !== undefined) {
      this.rows.set(effectId, {
        ...row,
        pages: row.pages + counts.marked,
        marked: row.marked + counts.marked,
        regenerations: row.regenerations + counts.regenerations,
      });
    }
    return Promise.resolve();
  }

  finishFanOut(effectId: string, fanOut: string, atMs: number): Promise<void> {
    const row = this.rows.get(effectId);
    if (row !== undefined && !this.#finished(effectId).has(fanOut)) {
      this.#finished(effectId).add(fanOut);
      const fanOuts = (row.fanOuts ?? 1) - 1;
      const done = fanOuts <= 0 ? { state: 'done' as const, doneAtMs: atMs } : {};
      this.rows.set(effectId, { ...row, fanOuts, ...done });
    }
    return Promise.resolve();
  }

  /** The fan-outs of an effect ended so far: each is counted once. */
  #finished(effectId: string): Set<string> {
    const finished = this.#ended.get(effectId) ?? new Set<string>();
    this.#ended.set(effectId, finished);
    return finished;
  }
}
