import { describe, expect, it } from '@jest/globals';
import { InMemoryPendingPurges } from '../../../../lambda/adapters/pending-purges/memory.js';
import { retryPendingPurges } from '../../../../lambda/core/operate/pending-purges.js';
import { CdnPurgeRejectedError } from '../../../../lambda/core/errors.js';
import type {
  PendingPurge,
  PendingPurgeSubmitter,
  PurgeAttempt,
} from '../../../../lambda/core/operate/ports.js';
import { TestClock } from '../../../helpers/clock.js';

const purge = (id: string, recordedAt: number): PendingPurge => ({
  id,
  tags: [`t/${id}`],
  reason: 'TooManyInvalidationsInProgress',
  recordedAt,
  attempts: 1,
});

/** A CDN that answers each resubmission from a script, by purge id. */
function scriptedCdn(answers: Record<string, PurgeAttempt | Error>) {
  const sent: string[] = [];
  const cdn: PendingPurgeSubmitter = {
    resubmit: (pending) => {
      sent.push(pending.id);
      const answer = answers[pending.id];
      if (answer instanceof Error) return Promise.reject(answer);
      return Promise.resolve(answer ?? { status: 'submitted', invalidationId: `I-${pending.id}` });
    },
  };
  return { cdn, sent };
}

async function storeWith(...purges: PendingPurge[]) {
  const pending = new InMemoryPendingPurges();
  for (const entry of purges) await pending.add(entry);
  return pending;
}

describe('retryPendingPurges', () => {
  it('resubmits pending purges oldest first and forgets each one CloudFront accepted', async () => {
    const pending = await storeWith(purge('b', 2000), purge('a', 1000));
    const { cdn, sent } = scriptedCdn({});
    const sweep = await retryPendingPurges({ pending, cdn, clock: new TestClock() });

    expect(sent).toEqual(['a', 'b']);
    expect(sweep).toEqual({
      submitted: [
        { purgeId: 'a', invalidationId: 'I-a' },
        { purgeId: 'b', invalidationId: 'I-b' },
      ],
      rejected: [],
      stillPending: 0,
    });
    expect(pending.all).toEqual([]);
  });

  it('stops at the first throttled purge and keeps it and every later one', async () => {
    const pending = await storeWith(purge('a', 1000), purge('b', 2000), purge('c', 3000));
    const { cdn, sent } = scriptedCdn({ b: { status: 'throttled', reason: 'still busy' } });
    const clock = new TestClock();
    const sweep = await retryPendingPurges({ pending, cdn, clock });

    expect(sent).toEqual(['a', 'b']);
    expect(sweep.stillPending).toBe(2);
    expect(pending.all.map((entry) => entry.id)).toEqual(['b', 'c']);
    expect(pending.rows.get('2000#b')).toEqual(
      expect.objectContaining({ attempts: 2, reason: 'still busy', lastAttemptAt: clock.now() }),
    );
  });

  it('sets a refused purge aside with its reason and goes on with the others', async () => {
    const pending = await storeWith(purge('a', 1000), purge('b', 2000));
    const { cdn } = scriptedCdn({ a: new CdnPurgeRejectedError('a', 'AccessDenied') });
    const sweep = await retryPendingPurges({ pending, cdn, clock: new TestClock() });

    expect(sweep.rejected).toEqual([{ purgeId: 'a', reason: 'AccessDenied' }]);
    expect(sweep.submitted.map((entry) => entry.purgeId)).toEqual(['b']);
    expect(sweep.stillPending).toBe(0);
    expect(pending.all).toEqual([]);
    expect(pending.refused.get('1000#a')).toMatchObject({ reason: 'AccessDenied', attempts: 2 });
  });

  it('never lets refused purges block newer ones: the next run gets to them', async () => {
    const refusals = Array.from({ length: 50 }, (_, i) => purge(`r${i}`, 1000 + i));
    const pending = await storeWith(...refusals, purge('new', 9000));
    const answers = Object.fromEntries(
      refusals.map((entry) => [entry.id, new CdnPurgeRejectedError(entry.id, 'InvalidArgument')]),
    );
    const { cdn, sent } = scriptedCdn(answers);
    const clock = new TestClock();
    await retryPendingPurges({ pending, cdn, clock }); // the 50 oldest: all refused
    expect(sent).not.toContain('new');
    const next = await retryPendingPurges({ pending, cdn, clock });
    expect(next.submitted).toEqual([{ purgeId: 'new', invalidationId: 'I-new' }]);
    expect(sent.filter((id) => id.startsWith('r'))).toHaveLength(50); // each refusal tried once
  });

  it('tries at most `limit` purges per run', async () => {
    const pending = await storeWith(purge('a', 1000), purge('b', 2000));
    const { cdn, sent } = scriptedCdn({});
    await retryPendingPurges({ pending, cdn, clock: new TestClock(), limit: 1 });
    expect(sent).toEqual(['a']);
    expect(pending.all.map((entry) => entry.id)).toEqual(['b']);
  });
});
