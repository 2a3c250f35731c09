import type { RevalidationStatus, RevalidationStatuses } from '../../core/ports.js';

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
}
