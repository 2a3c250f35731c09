/**
 * The FanOutProgressRows port's contract: the cursor moves (and the row goes) only from the
 * cursor a step read, and the sweeper finds the rows that have not moved for a while.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { FanOutProgress } from '../../../../lambda/core/ports.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const progress: FanOutProgress = {
  tenant: undefined,
  effectId: `rv_${'a'.repeat(32)}`,
  mode: 'stale',
  tag: 'post',
  regenerate: false,
  cursor: '',
  updatedAtMs: 1_000,
  marked: 0,
};

export function fanOutProgressContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`FanOutProgressRows contract (${name})`, () => {
    let s: TableSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('moves the cursor only from the cursor read: a second move from it loses', async () => {
      const rows = s.fanOutProgress;
      await rows.start(progress);
      const step = { from: '', to: 'c1', marked: 2, atMs: 2_000 };
      expect(await rows.advance(progress, step)).toBe(true);
      expect(await rows.advance(progress, step)).toBe(false);
      expect(await rows.get(progress)).toEqual({
        ...progress,
        cursor: 'c1',
        marked: 2,
        updatedAtMs: 2_000,
      });
      expect(await rows.advance(progress, { ...step, from: 'c1', to: 'c2' })).toBe(true);
      expect((await rows.get(progress))?.marked).toBe(4);
    });

    it('finishes (deletes) only from the cursor read', async () => {
      const rows = s.fanOutProgress;
      await rows.start({ ...progress, cursor: 'c1' });
      expect(await rows.finish(progress, '')).toBe(false);
      expect(await rows.get(progress)).toBeDefined();
      expect(await rows.finish(progress, 'c1')).toBe(true);
      expect(await rows.get(progress)).toBeUndefined();
      expect(await rows.finish(progress, 'c1')).toBe(false);
    });

    it('lists the rows not moved since a time, at most `limit`', async () => {
      const rows = s.fanOutProgress;
      await rows.start(progress);
      await rows.start({ ...progress, tag: 'news', updatedAtMs: 5_000 });
      await rows.start({ ...progress, tag: 'old', tenant: 't1', updatedAtMs: 500 });
      const stalled = await rows.stalled(2_000, 10);
      expect(stalled.map((row) => row.tag).sort()).toEqual(['old', 'post']);
      expect(stalled.find((row) => row.tag === 'old')?.tenant).toBe('t1');
      expect(await rows.stalled(2_000, 1)).toHaveLength(1);
      expect(await rows.stalled(400, 10)).toEqual([]);
    });
  });
}
