/**
 * The FanOutProgressRows port's contract: the cursor moves (and the row goes) only from the
 * cursor a step read, each move counting its batch on the effect's status (once: the move that
 * loses counts nothing), and the sweeper finds the rows that have not moved for a while.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type {
  FanOutProgress,
  RevalidationStatus,
} from '../../../../lambda/core/revalidate/ports.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

/** One tag's fan-out, at its start. */
export const progress: FanOutProgress = {
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

    const status = (fanOuts: number): RevalidationStatus => ({
      effectId: progress.effectId,
      tenant: undefined,
      mode: 'stale',
      regenerate: false,
      state: 'marking',
      pages: 1,
      marked: 1,
      regenerations: 0,
      held: 0,
      heldPages: [],
      acceptedAtMs: 1_000,
      fanOuts,
    });

    it('moves the cursor only from the cursor read: a second move from it loses', async () => {
      const rows = s.fanOutProgress;
      await rows.start(progress);
      const step = { from: '', to: 'c1', counts: { marked: 2, regenerations: 0 }, atMs: 2_000 };
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
      const last = (from: string) => ({ from, counts: { marked: 0, regenerations: 0 }, atMs: 3 });
      expect(await rows.finish(progress, last(''))).toBe(false);
      expect(await rows.get(progress)).toBeDefined();
      expect(await rows.finish(progress, last('c1'))).toBe(true);
      expect(await rows.get(progress)).toBeUndefined();
      expect(await rows.finish(progress, last('c1'))).toBe(false);
    });

    it("counts each move's batch on the status once, and the last finish makes it done", async () => {
      const rows = s.fanOutProgress;
      const statuses = s.revalidationStatuses;
      await statuses.put(status(2));
      await rows.start(progress);
      await rows.start({ ...progress, tag: 'news' });
      const counts = { marked: 3, regenerations: 1 };
      const step = { from: '', to: 'c1', counts, atMs: 2_000 };
      expect(await rows.advance(progress, step)).toBe(true);
      expect(await rows.advance(progress, step)).toBe(false); // a duplicate counts nothing
      expect(await rows.finish(progress, { from: 'c1', counts, atMs: 3_000 })).toBe(true);
      expect(await rows.finish(progress, { from: 'c1', counts, atMs: 3_001 })).toBe(false);
      expect(await statuses.get(progress.effectId)).toMatchObject({
        state: 'marking',
        marked: 7,
        pages: 7,
        regenerations: 2,
        fanOuts: 1,
      });
      const news = { ...progress, tag: 'news' };
      const none = { marked: 0, regenerations: 0 };
      expect(await rows.finish(news, { from: '', counts: none, atMs: 4_000 })).toBe(true);
      expect(await statuses.get(progress.effectId)).toMatchObject({
        state: 'done',
        marked: 7,
        fanOuts: 0,
        doneAtMs: 4_000,
      });
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
