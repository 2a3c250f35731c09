import type { PendingPurge, PendingPurges } from '../../core/operate/ports.js';

const keyOf = (purge: PendingPurge) => `${purge.recordedAt}#${purge.id}`;

/** The DynamoDB adapter's order: when it was recorded, then its id. */
const olderFirst = (a: PendingPurge, b: PendingPurge) =>
  a.recordedAt - b.recordedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Pending purges in memory, oldest first, with the DynamoDB adapter's add-once rule. */
export class InMemoryPendingPurges implements PendingPurges {
  readonly rows = new Map<string, PendingPurge & { lastAttemptAt?: number }>();
  /** Purges the CDN refused for good, set aside with their reason. */
  readonly refused = new Map<string, PendingPurge & { refusedAt: number }>();

  /** Every row, oldest first, with when its last attempt was (for tests to read). */
  get all(): (PendingPurge & { lastAttemptAt?: number })[] {
    return [...this.rows.values()].sort(olderFirst);
  }

  add(purge: PendingPurge): Promise<void> {
    if (!this.rows.has(keyOf(purge))) this.rows.set(keyOf(purge), purge);
    return Promise.resolve();
  }

  oldest(limit: number): Promise<PendingPurge[]> {
    return Promise.resolve(
      this.all.slice(0, limit).map(({ id, tags, reason, recordedAt, attempts }) => ({
        id,
        tags,
        reason,
        recordedAt,
        attempts,
      })),
    );
  }

  recordAttempt(purge: PendingPurge, input: { reason: string; at: number }): Promise<void> {
    const row = this.rows.get(keyOf(purge));
    if (row !== undefined) {
      this.rows.set(keyOf(purge), {
        ...row,
        reason: input.reason,
        attempts: row.attempts + 1,
        lastAttemptAt: input.at,
      });
    }
    return Promise.resolve();
  }

  refuse(purge: PendingPurge, input: { reason: string; at: number }): Promise<void> {
    const attempts = purge.attempts + 1;
    this.refused.set(keyOf(purge), {
      ...purge,
      reason: input.reason,
      attempts,
      refusedAt: input.at,
    });
    this.rows.delete(keyOf(purge));
    return Promise.resolve();
  }

  remove(purge: PendingPurge): Promise<void> {
    this.rows.delete(keyOf(purge));
    return Promise.resolve();
  }
}
