/** The RenderCounter port's contract: one count per cache entry, from 1, whatever the others'. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const keyOf = (rawPath: string) => normaliseCacheKey({ rawPath }, { allowedQueryParams: [] });

export function renderCounterContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`RenderCounter contract (${name})`, () => {
    let s: TableSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    it('counts each cache entry on its own, starting at 1', async () => {
      expect(await s.renderCounter.increment(keyOf('/counted'))).toBe(1);
      expect(await s.renderCounter.increment(keyOf('/counted'))).toBe(2);
      expect(await s.renderCounter.increment(keyOf('/other'))).toBe(1);
      expect(await s.renderCounter.increment(keyOf('/counted'))).toBe(3);
    });
  });
}
