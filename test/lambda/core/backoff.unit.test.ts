import { describe, expect, it } from '@jest/globals';
import {
  nextFailure,
  retryState,
  RetryState,
  type FailureRecord,
} from '../../../lambda/core/backoff.js';

const policy = { backoffSeconds: 15, brokenAfter: 4 };

describe('failure backoff', () => {
  it('doubles the wait with each failure in a row', () => {
    let record: FailureRecord | undefined;
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      record = nextFailure(record, 1_000, 'render-failed: 503', policy);
      waits.push(record.nextAttemptAt - 1_000);
    }
    expect(waits).toEqual([15, 30, 60, 120]);
    expect(record).toMatchObject({ count: 4, lastFailedAt: 1_000, error: 'render-failed: 503' });
  });

  it('is due without failures, backs off inside the wait, is due after it', () => {
    const record = nextFailure(undefined, 1_000, 'x', policy);
    expect(retryState(undefined, 1_000, policy)).toBe(RetryState.Due);
    expect(retryState(record, 1_014, policy)).toBe(RetryState.BackingOff);
    expect(retryState(record, 1_015, policy)).toBe(RetryState.Due);
  });

  it('calls a page broken after brokenAfter failures in a row, whatever the time', () => {
    let record: FailureRecord | undefined;
    for (let i = 0; i < 4; i++) record = nextFailure(record, 1_000, 'x', policy);
    expect(retryState(record, 1_000_000, policy)).toBe(RetryState.Broken);
  });

  it('lets a broken page be attempted once half its META’s remaining retention has passed', () => {
    let record: FailureRecord | undefined;
    for (let i = 0; i < 4; i++) record = nextFailure(record, 1_000, 'x', policy);
    const expiresAt = 1_000 + 7 * 86_400;
    expect(retryState(record, 1_000 + 3.5 * 86_400 - 1, policy, expiresAt)).toBe(RetryState.Broken);
    expect(retryState(record, 1_000 + 3.5 * 86_400, policy, expiresAt)).toBe(RetryState.Due);
  });
});
