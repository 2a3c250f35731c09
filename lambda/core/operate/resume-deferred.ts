/**
 * Catching up on deferred intents: each run re-queues, oldest first, as many deferred intents
 * of a scope as its current window has room for, then forgets their rows. The worker counts
 * them against the budget as any intent; one that still finds no room is deferred again.
 */
import { epochSeconds, type Clock } from '../clock.js';
import { sha256Hex } from '../page/cache-key.js';
import { messageGroupOf } from '../page/intent.js';
import type { RegenerationQueue } from '../page/ports.js';
import {
  budgetWindowOf,
  intentOfDeferred,
  type BudgetDeps,
  type DeferredIntent,
} from '../page/budget.js';

export interface ResumeDeps extends BudgetDeps {
  readonly queue: RegenerationQueue;
  readonly clock: Pick<Clock, 'now'>;
  /** Deferred rows read per run (one Query page). @default 1000 */
  readonly limit?: number | undefined;
}

/** What one run did: intents re-queued, intents left waiting, rows that held no intent. */
export interface ResumeReport {
  readonly requeued: number;
  readonly waiting: number;
  readonly unreadable: readonly string[];
}

/**
 * Re-queues deferred intents within each scope's room this window. Order: send, then release,
 * so a crash between the two re-queues the intent again (a duplicate the worker answers as
 * fresh or replayed), never loses it. The deduplication ID names the row and the window, so two
 * runs in one window send one message.
 */
export async function resumeDeferred(deps: ResumeDeps): Promise<ResumeReport> {
  const now = epochSeconds(deps.clock);
  const window = budgetWindowOf(now);
  const rows = [...(await deps.budget.deferred(deps.limit ?? 1_000))].sort(
    (a, b) => a.deferredAt - b.deferredAt,
  );
  const room = new Map<string, number>();
  const roomOf = async (scope: string): Promise<number> =>
    room.get(scope) ?? deps.perMinute - (await deps.budget.count(scope, window));
  let requeued = 0;
  const unreadable: string[] = [];
  for (const row of rows) {
    const left = await roomOf(row.scope);
    room.set(row.scope, left);
    if (left <= 0) continue;
    if (!(await requeue(deps, row, window))) {
      unreadable.push(row.pk);
    } else {
      requeued += 1;
      room.set(row.scope, left - 1);
    }
    await deps.budget.release(row);
  }
  return { requeued, waiting: rows.length - requeued - unreadable.length, unreadable };
}

/** Sends the row's intent; false when the row holds none (it is released and reported). */
async function requeue(deps: ResumeDeps, row: DeferredIntent, window: number): Promise<boolean> {
  let intent;
  try {
    intent = intentOfDeferred(row);
  } catch {
    return false;
  }
  await deps.queue.enqueue(intent, {
    deduplicationId: sha256Hex([row.pk, 'deferred', row.deferredAt, window].join('|')),
    groupId: messageGroupOf(row.pk),
  });
  return true;
}
