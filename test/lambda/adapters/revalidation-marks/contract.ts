/**
 * The RevalidationMarks port's contract: a revalidation marks the rows a page has and creates
 * none, makes META stale for every reader (its failure record cleared), or deletes it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const T = 1_800_000_000;

export function revalidationMarksContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`RevalidationMarks contract (${name})`, () => {
    let s: TableSubject;
    let pages = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    /** A published page whose last regeneration failed. */
    async function published() {
      const pk = `CACHE#contract-marks-${++pages}`;
      const lease = await s.cacheTable.acquireLease({ pk, now: T, durationSeconds: 30 });
      const meta = { pk, s3Key: `pages/_/m/${pages}`, generatedAt: T, revalidateSeconds: 60 };
      await s.cacheTable.publishGeneration({ observed: undefined, lease, meta, now: T });
      const record = { count: 1, lastFailedAt: T, nextAttemptAt: T + 15, error: 'e: down' };
      await s.cacheTable.recordFailure({ pk, observedGeneratedAt: T, previousCount: 0, record });
      return { pk, meta };
    }

    it('marks LOCK only where there is one', async () => {
      const { pk } = await published();
      expect(await s.marks.markLock(pk, 'rv_1')).toBe(false);
      await s.cacheTable.acquireLease({ pk, now: T + 1, durationSeconds: 30 });
      expect(await s.marks.markLock(pk, 'rv_1')).toBe(true);
    });

    it('makes META stale for every reader and clears its failure record; answers META as it was', async () => {
      const { pk, meta } = await published();
      const before = await s.marks.markStale(pk, { effectId: 'rv_2', now: T + 5 });
      expect(before).toMatchObject({ ...meta, failures: { count: 1 } });
      const after = await s.cacheTable.getMeta(pk, { consistent: true });
      expect(after).toMatchObject({ ...meta, revalidateSeconds: 0, revalidatedAt: T + 5 });
      expect(after?.failures).toBeUndefined();
    });

    it('deletes META on expire, answering it as it was', async () => {
      const { pk, meta } = await published();
      expect(await s.marks.expire(pk)).toMatchObject(meta);
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toBeUndefined();
    });

    it('clears a hit-for-pass mark (which replaced META), answering whether there was one', async () => {
      const { pk } = await published();
      const lease = await s.cacheTable.acquireLease({ pk, now: T + 1, durationSeconds: 30 });
      const mark = {
        pk,
        until: T + 300,
        reason: 'uncacheable',
        markedAt: T + 1,
        cacheKey: '/p',
        ttl: T + 3_900,
      };
      await s.cacheTable.markPass({ lease, mark, now: T + 1 });
      expect((await s.cacheTable.readPage(pk)).pass).toBeDefined();
      expect(await s.marks.clearPass(pk)).toBe(true);
      expect(await s.cacheTable.readPage(pk)).toEqual({ meta: undefined, pass: undefined });
      expect(await s.marks.clearPass(pk)).toBe(false);
    });

    it('creates no row for a page that has none', async () => {
      const pk = `CACHE#contract-marks-none-${++pages}`;
      expect(await s.marks.markStale(pk, { effectId: 'rv_3', now: T })).toBeUndefined();
      expect(await s.marks.expire(pk)).toBeUndefined();
      expect(await s.marks.markLock(pk, 'rv_3')).toBe(false);
      expect(await s.marks.clearPass(pk)).toBe(false);
      expect(await s.cacheTable.getMeta(pk, { consistent: true })).toBeUndefined();
      const lease = await s.cacheTable.acquireLease({ pk, now: T, durationSeconds: 30 });
      expect(lease.takenOver).toBeUndefined(); // no LOCK was created either
    });
  });
}
