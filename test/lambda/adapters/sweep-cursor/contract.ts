/** The SweepCursor port's contract: where the orphan sweep's listing stopped, kept between runs. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

export function sweepCursorContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`SweepCursor contract (${name})`, () => {
    let s: TableSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('starts with no position, keeps the last one saved, and starts over once told the lap ended', async () => {
      expect(await s.sweepCursor.load()).toBeUndefined();
      await s.sweepCursor.save('page-2');
      await s.sweepCursor.save('page-3');
      expect(await s.sweepCursor.load()).toBe('page-3');
      await s.sweepCursor.save(undefined);
      expect(await s.sweepCursor.load()).toBeUndefined();
    });
  });
}
