/** The RevalidationStatuses port's contract: the latest status of an effect, none for an unknown one. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { RevalidationStatus } from '../../../../lambda/core/ports.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const status = (effectId: string, state: 'marking' | 'done'): RevalidationStatus => ({
  effectId,
  tenant: 'acme',
  mode: 'stale',
  regenerate: true,
  state,
  pages: 3,
  marked: state === 'done' ? 3 : 1,
  regenerations: 2,
  held: 1,
  heldPages: [{ key: '/held', holdUntil: 1_800_000_600 }],
  acceptedAtMs: 1_800_000_000_000,
  ...(state === 'done' ? { doneAtMs: 1_800_000_001_000 } : {}),
});

export function revalidationStatusesContract(
  name: string,
  make: () => Promise<TableSubject>,
): void {
  describe(`RevalidationStatuses contract (${name})`, () => {
    let s: TableSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('reads back the latest status of an effect, and nothing for an unknown one', async () => {
      const id = `rv_${'a'.repeat(32)}`;
      await s.revalidationStatuses.put(status(id, 'marking'));
      await s.revalidationStatuses.put(status(id, 'done'));
      expect(await s.revalidationStatuses.get(id)).toEqual(status(id, 'done'));
      expect(await s.revalidationStatuses.get(`rv_${'f'.repeat(32)}`)).toBeUndefined();
    });

    it('adds batch counts and is done when the last fan-out finishes; a late count never makes a row', async () => {
      const id = `rv_${'b'.repeat(32)}`;
      const statuses = s.revalidationStatuses;
      await statuses.put({ ...status(id, 'marking'), pages: 0, marked: 0, fanOuts: 2 });
      await statuses.addMarked(id, { marked: 5, regenerations: 1 });
      await statuses.addMarked(id, { marked: 2, regenerations: 0 });
      await statuses.finishFanOut(id, 'stale#a', 1_800_000_009_000);
      expect(await statuses.get(id)).toMatchObject({ state: 'marking', marked: 7, fanOuts: 1 });
      // The same fan-out ending again (its last step redelivered) is not another one ending.
      await statuses.finishFanOut(id, 'stale#a', 1_800_000_009_500);
      expect(await statuses.get(id)).toMatchObject({ state: 'marking', fanOuts: 1 });
      await statuses.finishFanOut(id, 'stale#b', 1_800_000_010_000);
      expect(await statuses.get(id)).toMatchObject({
        state: 'done',
        marked: 7,
        regenerations: 3,
        doneAtMs: 1_800_000_010_000,
        fanOuts: 0,
      });
      await statuses.finishFanOut(id, 'stale#b', 1_800_000_011_000);
      expect(await statuses.get(id)).toMatchObject({ doneAtMs: 1_800_000_010_000 });
      const unknown = `rv_${'e'.repeat(32)}`;
      await statuses.addMarked(unknown, { marked: 1, regenerations: 0 });
      await statuses.finishFanOut(unknown, 'stale#a', 1);
      expect(await statuses.get(unknown)).toBeUndefined();
    });
  });
}
