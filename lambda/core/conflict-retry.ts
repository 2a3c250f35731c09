/**
 * A transaction another writer's cancelled is tried again, after a growing wait with jitter. AWS
 * cancels a transaction that includes an item another ongoing transaction includes
 * (`TransactionConflict`, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling)
 * and the SDK does not retry it. Retried at once, writers that met each other meet again (100
 * fan-outs finishing together); each waits a random part of a doubling window instead, on the
 * clock port, so tests and the model check move time themselves.
 */
import type { Clock } from './clock.js';
import { TransactionConflictError } from './errors.js';
import { systemRandom, type Random } from './random.js';

/** Attempts at one write before its conflict is thrown: about 2.5 s of waiting at most. */
export const CONFLICT_ATTEMPTS = 8;
/** The first window; each attempt doubles it, up to `MAX_WINDOW_MS`. */
const FIRST_WINDOW_MS = 20;
const MAX_WINDOW_MS = 1_000;

/**
 * The wait before attempt `attempt + 1` (`attempt` from 1): half the window, plus a random part
 * of the other half, so no two writers keep the same rhythm and none retries at once.
 */
export const conflictBackoffMs = (attempt: number, random: Random): number => {
  const window = Math.min(MAX_WINDOW_MS, FIRST_WINDOW_MS * 2 ** (attempt - 1));
  return Math.round(window / 2 + (window / 2) * random());
};

/**
 * Runs `write`, again after `conflictBackoffMs` each time it throws `TransactionConflictError`,
 * at most `attempts` times. Anything else is thrown at once. @throws the last conflict
 */
export async function retryConflicts<T>(
  deps: { readonly clock: Clock; readonly random?: Random | undefined },
  write: () => Promise<T>,
  attempts = CONFLICT_ATTEMPTS,
): Promise<T> {
  const random = deps.random ?? systemRandom;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!(error instanceof TransactionConflictError) || attempt >= attempts) throw error;
      await deps.clock.sleep(conflictBackoffMs(attempt, random));
    }
  }
}
