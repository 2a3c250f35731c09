/**
 * Failed regenerations, per cache key, in one place. A page whose regeneration keeps failing
 * keeps serving its last good generation; each failure doubles the wait before the next attempt
 * (stale hits inside the wait queue nothing, queued intents inside it are acknowledged without a
 * render), and after `brokenAfter` failures in a row the page is reported broken and no longer
 * retried on its own (a revalidation or an explicit regeneration retries it), except once half
 * its META's remaining retention has passed, so a page still requested keeps its rows (each
 * attempt moves META's TTL on). Renders of a broken page therefore grow with log(time), not with
 * its traffic. A publish clears the record.
 */

export interface FailurePolicy {
  /** Wait after the first failure; each further failure doubles it. */
  readonly backoffSeconds: number;
  /** Failures in a row after which the page is broken: reported, not retried on its own. */
  readonly brokenAfter: number;
}

export const DEFAULT_FAILURE_POLICY: FailurePolicy = { backoffSeconds: 15, brokenAfter: 10 };

/** The failure record kept on META (`regen_failures`, `regen_failed_at`, ...). */
export interface FailureRecord {
  /** Failures in a row since the last publish. */
  readonly count: number;
  /** Epoch seconds. */
  readonly lastFailedAt: number;
  /** Epoch seconds: no automatic attempt before this. */
  readonly nextAttemptAt: number;
  /** The last failure's code and message. */
  readonly error: string;
}

export const RetryState = {
  /** No failure, or its wait is over: regenerate. */
  Due: 'due',
  /** Inside the wait after a failure: serve the last good page, queue nothing. */
  BackingOff: 'backing-off',
  /** Failed `brokenAfter` times in a row: reported, retried only on request. */
  Broken: 'broken',
} as const;
export type RetryState = (typeof RetryState)[keyof typeof RetryState];

/** `expiresAt`: META's TTL, epoch seconds (a broken page is due again half-way to it). */
export function retryState(
  failures: FailureRecord | undefined,
  nowSeconds: number,
  policy: FailurePolicy,
  expiresAt?: number,
): RetryState {
  if (failures === undefined) return RetryState.Due;
  if (failures.count >= policy.brokenAfter) {
    const keepAlive = expiresAt === undefined ? Infinity : (failures.lastFailedAt + expiresAt) / 2;
    return nowSeconds >= keepAlive ? RetryState.Due : RetryState.Broken;
  }
  return nowSeconds < failures.nextAttemptAt ? RetryState.BackingOff : RetryState.Due;
}

/** The record after one more failure. */
export function nextFailure(
  previous: FailureRecord | undefined,
  nowSeconds: number,
  error: string,
  policy: FailurePolicy,
): FailureRecord {
  const count = (previous?.count ?? 0) + 1;
  return {
    count,
    lastFailedAt: nowSeconds,
    nextAttemptAt: nowSeconds + policy.backoffSeconds * 2 ** (count - 1),
    error: error.slice(0, 512),
  };
}
