/**
 * The RegenerationBudget port's contract: the count never passes the cap however many take at
 * once, windows and scopes count apart, and deferred intents coalesce to one row per page.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DeferredIntent } from '../../../../lambda/core/page/budget.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const deferral = (pk: string, at: number, explicit = false, scope = ''): DeferredIntent => ({
  pk,
  scope,
  body: JSON.stringify({ v: 1, path: `/${pk}`, deployId: 'd1', at }),
  explicit,
  deferredAt: at,
});

export function regenerationBudgetContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`RegenerationBudget contract (${name})`, () => {
    let s: TableSubject;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    it('lets exactly `cap` of many concurrent takes through, and counts them', async () => {
      const taken = await Promise.all(
        Array.from({ length: 20 }, () => s.budget.take('race', 1000, 5)),
      );
      expect(taken.filter(Boolean)).toHaveLength(5);
      expect(await s.budget.count('race', 1000)).toBe(5);
    });

    it('negative control: under a cap above the demand every take counts', async () => {
      const taken = await Promise.all(
        Array.from({ length: 20 }, () => s.budget.take('roomy', 1000, 25)),
      );
      expect(taken.every(Boolean)).toBe(true);
      expect(await s.budget.count('roomy', 1000)).toBe(20);
    });

    it('counts each window and each scope apart, from 0', async () => {
      expect(await s.budget.count('', 7)).toBe(0);
      expect(await s.budget.take('', 7, 1)).toBe(true);
      expect(await s.budget.take('', 7, 1)).toBe(false);
      expect(await s.budget.take('', 8, 1)).toBe(true);
      expect(await s.budget.take('tenant-a', 7, 1)).toBe(true);
      expect([await s.budget.count('', 7), await s.budget.count('tenant-a', 7)]).toEqual([1, 1]);
    });

    it('keeps one deferred row per page: the latest, never a stale one over an explicit one', async () => {
      await s.budget.defer(deferral('CACHE#a', 10));
      await s.budget.defer(deferral('CACHE#a', 11));
      await s.budget.defer(deferral('CACHE#b', 12, true));
      await s.budget.defer(deferral('CACHE#b', 13));
      await s.budget.defer(deferral('TENANT#t#CACHE#c', 14, false, 't'));
      const rows = await s.budget.deferred(10);
      expect(rows.map((row) => [row.pk, row.deferredAt, row.explicit])).toEqual([
        ['CACHE#a', 11, false],
        ['CACHE#b', 12, true],
        ['TENANT#t#CACHE#c', 14, false],
      ]);
      expect(rows[0]).toEqual(deferral('CACHE#a', 11));
      expect((await s.budget.deferred(10, 't')).map((row) => row.pk)).toEqual(['TENANT#t#CACHE#c']);
      expect((await s.budget.deferred(10, '')).map((row) => row.pk)).toEqual([
        'CACHE#a',
        'CACHE#b',
      ]);
      expect(await s.budget.deferred(1)).toHaveLength(1);
    });

    it('releases only the deferral it read: one deferred again since stays', async () => {
      await s.budget.defer(deferral('CACHE#r', 20));
      const seen = deferral('CACHE#r', 20);
      await s.budget.defer(deferral('CACHE#r', 21));
      await s.budget.release(seen);
      expect((await s.budget.deferred(10)).find((row) => row.pk === 'CACHE#r')?.deferredAt).toBe(
        21,
      );
      await s.budget.release(deferral('CACHE#r', 21));
      expect((await s.budget.deferred(10)).some((row) => row.pk === 'CACHE#r')).toBe(false);
    });
  });
}
