/**
 * One sweep at a time without a reserved instance: a run holds a lease in the cache table (a
 * LOCK row like a page's, `pk = ISR#SWEEPER`, taken with the same free-or-expired condition)
 * for as long as the function may run, and releases it when done. A run that finds it held
 * skips, so EventBridge delivering a schedule twice or an operator's manual invoke never lists
 * the same bodies or resubmits the same purges as a run in progress. A crashed run's lease runs
 * out with its timeout.
 */
import { epochSeconds, type Clock } from '../clock.js';
import type { LeaseHolder } from '../errors.js';
import { releaseLease, tryTakeLease } from '../page/lease.js';
import type { CacheTable } from '../page/ports.js';
import { SWEEP_LEASE_PK } from '../page/rows.js';

export interface SweepLeaseDeps {
  readonly table: Pick<CacheTable, 'acquireLease' | 'releaseLease'>;
  readonly clock: Pick<Clock, 'now'>;
  /** How long a run may last: the function's timeout and the clock-skew margin. */
  readonly holdSeconds: number;
  /** Who holds it, for operators (the function's name). */
  readonly owner?: string | undefined;
}

/** What `runAlone` did: ran `work` under the lease, or skipped it for a live holder. */
export type Alone<T> =
  | { readonly ran: true; readonly result: T }
  | { readonly ran: false; readonly heldBy: LeaseHolder | undefined };

/** Runs `work` holding the sweep lease, or not at all while another run holds it. */
export async function runAlone<T>(deps: SweepLeaseDeps, work: () => Promise<T>): Promise<Alone<T>> {
  const taken = await tryTakeLease(deps.table, {
    pk: SWEEP_LEASE_PK,
    now: epochSeconds(deps.clock),
    durationSeconds: deps.holdSeconds,
    owner: deps.owner,
  });
  if (!('lease' in taken)) return { ran: false, heldBy: taken.heldBy };
  try {
    return { ran: true, result: await work() };
  } finally {
    // Best-effort: a lease not released runs out on its own.
    await releaseLease(deps.table, taken.lease);
  }
}
