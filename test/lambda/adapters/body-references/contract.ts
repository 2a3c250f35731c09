/**
 * The BodyReferences port's contract: what points to a page's bodies (META, the versions it
 * lists, a LOCK), and the guarded delete of the version rows META does not list.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const T = 1_800_000_000;

export function bodyReferencesContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`BodyReferences contract (${name})`, () => {
    let s: TableSubject;
    let pages = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    const body = (pk: string, n: number) => `pages/_/${pk}/${n}`;
    /** Publishes generations 1..n, META listing only the last `keep` of them. */
    async function page(n: number, keep: number) {
      const pk = `CACHE#contract-refs-${++pages}`;
      const sks: string[] = [];
      for (let i = 1; i <= n; i++) {
        const sk = `VER#${T + i}-t${i}`;
        sks.unshift(sk);
        const lease = await s.cacheTable.acquireLease({ pk, now: T + i, durationSeconds: 30 });
        const meta = {
          pk,
          s3Key: body(pk, i),
          generatedAt: T + i,
          revalidateSeconds: 60,
          currentSk: sk,
          versionSks: sks.slice(0, keep),
        };
        await s.cacheTable.publishGeneration({ observed: undefined, lease, meta, now: T + i });
      }
      return { pk, sks };
    }

    it('names META’s body and those of the versions it lists; the others are unlisted', async () => {
      const { pk, sks } = await page(3, 2);
      const refs = await s.references.of(pk);
      expect([...refs.s3Keys].sort()).toEqual([body(pk, 2), body(pk, 3)]);
      expect(refs.unlisted).toEqual([{ sk: sks[2], s3Key: body(pk, 1) }]);
      expect(refs.lease).toBeUndefined();
    });

    it('tells the page’s LOCK, live or not', async () => {
      const { pk } = await page(1, 1);
      const lease = await s.cacheTable.acquireLease({ pk, now: T + 5, durationSeconds: 30 });
      expect((await s.references.of(pk)).lease).toEqual({ token: lease.token, expiresAt: T + 35 });
    });

    it('deletes only the version rows META does not list', async () => {
      const { pk, sks } = await page(3, 2);
      expect(await s.references.forgetUnlisted(pk, [sks[2] ?? '', sks[0] ?? ''])).toEqual([sks[2]]);
      expect((await s.references.of(pk)).unlisted).toEqual([]);
      expect((await s.history.versions(pk)).map((version) => version.sk)).toEqual(sks.slice(0, 2));
    });

    it('finds every row unlisted once META is gone, and may delete them all', async () => {
      const { pk, sks } = await page(2, 2);
      await s.marks.expire(pk);
      const refs = await s.references.of(pk);
      expect(refs.s3Keys.size).toBe(0);
      expect(refs.unlisted.map((version) => version.sk).sort()).toEqual([...sks].sort());
      expect((await s.references.forgetUnlisted(pk, sks)).sort()).toEqual([...sks].sort());
    });
  });
}
