/** The TagRevalidations port's contract: a revalidation walks every page under a tag. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

export function tagRevalidationsContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`TagRevalidations contract (${name})`, () => {
    let s: TableSubject;
    let tags = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    it('pages through every page under a tag, each once, whatever the page size', async () => {
      const tag = `many${++tags}`;
      const pks = Array.from({ length: 5 }, (_, i) => `CACHE#page-${i}`);
      await s.tagIndex.add(undefined, pks[0] ?? '', [tag]);
      for (const pk of pks.slice(1)) await s.tagIndex.add(undefined, pk, [tag]);
      const seen: string[] = [];
      let cursor: string | undefined;
      let calls = 0;
      do {
        const page = await s.tagRevalidations.pages(undefined, tag, cursor);
        seen.push(...page.pks);
        cursor = page.next;
        calls += 1;
      } while (cursor !== undefined && calls < 10);
      expect(seen.sort()).toEqual(pks);
      expect(calls).toBeGreaterThan(1);
    });

    it('reads back when each tag was revalidated, per tenant, over more than one batch', async () => {
      const tag = (i: number) => `timed${tags}-${i}`;
      tags += 1;
      const all = Array.from({ length: 130 }, (_, i) => tag(i));
      await s.tagRevalidations.recordRevalidation('acme', tag(0), {
        effectId: 'rv_a',
        atMs: 1_000,
      });
      await s.tagRevalidations.recordRevalidation('acme', tag(0), {
        effectId: 'rv_b',
        atMs: 2_000,
      });
      await s.tagRevalidations.recordRevalidation('acme', tag(120), {
        effectId: 'rv_c',
        atMs: 3_000,
      });
      await s.tagRevalidations.recordRevalidation('globex', tag(1), {
        effectId: 'rv_d',
        atMs: 4_000,
      });
      expect(await s.tagRevalidations.revalidatedAt('acme', all)).toEqual(
        new Map([
          [tag(0), 2_000],
          [tag(120), 3_000],
        ]),
      );
      expect(await s.tagRevalidations.revalidatedAt(undefined, all)).toEqual(new Map());
    });

    it('finds no page under a tag nobody carries', async () => {
      expect(await s.tagRevalidations.pages('acme', `none${++tags}`)).toEqual({
        pks: [],
        next: undefined,
      });
    });
  });
}
