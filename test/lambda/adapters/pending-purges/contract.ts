/** The PendingPurges port's contract: purges kept once, read oldest first, until removed or refused. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { PendingPurge } from '../../../../lambda/core/operate/ports.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const purge = (id: string, recordedAt: number): PendingPurge => ({
  id,
  tags: [`_/${id}`, `_/${id}-2`],
  reason: 'TooManyInvalidationsInProgress',
  recordedAt,
  attempts: 1,
});

export function pendingPurgesContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`PendingPurges contract (${name})`, () => {
    let s: TableSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('reads the oldest first, at most the limit asked, each kept once', async () => {
      await s.pendingPurges.add(purge('b', 2_000));
      await s.pendingPurges.add(purge('a', 1_000));
      await s.pendingPurges.add(purge('c', 2_000));
      await s.pendingPurges.add({ ...purge('a', 1_000), attempts: 9, reason: 'again' });
      expect(await s.pendingPurges.oldest(10)).toEqual([
        purge('a', 1_000),
        purge('b', 2_000),
        purge('c', 2_000),
      ]);
      expect((await s.pendingPurges.oldest(1)).map((p) => p.id)).toEqual(['a']);
    });

    it('counts a failed attempt with its reason, and forgets a purge once removed', async () => {
      await s.pendingPurges.add(purge('a', 1_000));
      await s.pendingPurges.recordAttempt(purge('a', 1_000), { reason: 'throttled', at: 5_000 });
      expect(await s.pendingPurges.oldest(10)).toEqual([
        { ...purge('a', 1_000), attempts: 2, reason: 'throttled' },
      ]);
      await s.pendingPurges.remove(purge('a', 1_000));
      expect(await s.pendingPurges.oldest(10)).toEqual([]);
      // An attempt recorded after another sweeper removed it does not bring it back.
      await s.pendingPurges.recordAttempt(purge('a', 1_000), { reason: 'late', at: 6_000 });
      expect(await s.pendingPurges.oldest(10)).toEqual([]);
    });

    it('never reads a refused purge again: newer ones get their turn', async () => {
      await s.pendingPurges.add(purge('a', 1_000));
      await s.pendingPurges.add(purge('b', 2_000));
      await s.pendingPurges.refuse(purge('a', 1_000), { reason: 'InvalidArgument', at: 5_000 });
      expect((await s.pendingPurges.oldest(1)).map((p) => p.id)).toEqual(['b']);
    });
  });
}
