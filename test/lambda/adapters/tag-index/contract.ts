/** The TagIndex port's contract, as publishers keep it: pages added and removed under tags. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

export function tagIndexContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`TagIndex contract (${name})`, () => {
    let s: TableSubject;
    let tags = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    /** Every page under a tag, walking the revalidation side's cursor to its end. */
    async function pagesUnder(tenant: string | undefined, tag: string) {
      const found: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await s.tagRevalidations.pages(tenant, tag, cursor);
        found.push(...page.pks);
        cursor = page.next;
      } while (cursor !== undefined);
      return found.sort();
    }

    it('indexes a page under each tag it gains, and drops it from those it loses', async () => {
      const [a, b] = [`a${++tags}`, `b${tags}`];
      await s.tagIndex.add(undefined, 'CACHE#p1', [a, b]);
      await s.tagIndex.add(undefined, 'CACHE#p2', [a]);
      expect(await pagesUnder(undefined, a)).toEqual(['CACHE#p1', 'CACHE#p2']);
      await s.tagIndex.remove(undefined, 'CACHE#p1', [a]);
      expect(await pagesUnder(undefined, a)).toEqual(['CACHE#p2']);
      expect(await pagesUnder(undefined, b)).toEqual(['CACHE#p1']);
    });

    it('keeps tenants apart', async () => {
      const tag = `t${++tags}`;
      await s.tagIndex.add('acme', 'TENANT#acme#CACHE#p', [tag]);
      expect(await pagesUnder('globex', tag)).toEqual([]);
      expect(await pagesUnder(undefined, tag)).toEqual([]);
      expect(await pagesUnder('acme', tag)).toEqual(['TENANT#acme#CACHE#p']);
    });

    it('counts the pages under a tag up to a limit, not its revalidation row, per tenant', async () => {
      const tag = `c${++tags}`;
      for (const pk of ['CACHE#c1', 'CACHE#c2', 'CACHE#c3'])
        await s.tagIndex.add('acme', pk, [tag]);
      await s.tagRevalidations.recordRevalidation('acme', tag, { effectId: 'rv_c', atMs: 1_000 });
      const past = await s.tagIndex.countPages('acme', tag, 2);
      expect(past.exact).toBe(false); // an estimate, at least the limit
      expect(past.count).toBeGreaterThanOrEqual(2);
      expect(await s.tagIndex.countPages('acme', tag, 3)).toEqual({ count: 3, exact: true });
      expect(await s.tagIndex.countPages('acme', tag, 16)).toEqual({ count: 3, exact: true });
      expect(await s.tagIndex.countPages('globex', tag, 16)).toEqual({ count: 0, exact: true });
      expect(await s.tagRevalidations.countPages('acme', tag, 3)).toEqual({
        count: 3,
        exact: true,
      });
    });

    it('tells when each tag was last revalidated, and nothing of the others', async () => {
      const [a, b] = [`r${++tags}`, `s${tags}`];
      await s.tagRevalidations.recordRevalidation('acme', a, { effectId: 'rv_1', atMs: 1_000 });
      await s.tagRevalidations.recordRevalidation('acme', a, { effectId: 'rv_2', atMs: 2_000 });
      expect(await s.tagIndex.revalidatedAt('acme', [a, b])).toEqual(new Map([[a, 2_000]]));
      expect(await s.tagIndex.revalidatedAt('globex', [a])).toEqual(new Map());
    });
  });
}
