import type { CacheMeta } from '../../core/page/model.js';
import type { RevalidationMarks } from '../../core/revalidate/ports.js';
import type { MemoryTable } from '../shared/memory-table.js';

/** A revalidation's marks on in-memory rows, with the DynamoDB adapter's conditions. */
export class InMemoryRevalidationMarks implements RevalidationMarks {
  constructor(readonly state: MemoryTable) {}

  markLock(pk: string, effectId: string): Promise<boolean> {
    const lock = this.state.locks.get(pk);
    if (lock === undefined) return Promise.resolve(false);
    this.state.locks.set(pk, { ...lock, revalidatedBy: effectId });
    return Promise.resolve(true);
  }

  markStale(pk: string, input: { effectId: string; now: number }): Promise<CacheMeta | undefined> {
    const meta = this.state.metas.get(pk);
    if (meta !== undefined) {
      this.state.metas.set(pk, {
        ...meta,
        revalidateSeconds: 0,
        revalidatedAt: input.now,
        revalidatedBy: input.effectId,
        failures: undefined,
      });
    }
    return Promise.resolve(meta);
  }

  expire(pk: string): Promise<CacheMeta | undefined> {
    const meta = this.state.metas.get(pk);
    this.state.metas.delete(pk);
    return Promise.resolve(meta);
  }

  clearPass(pk: string): Promise<boolean> {
    return Promise.resolve(this.state.passes.delete(pk));
  }
}
