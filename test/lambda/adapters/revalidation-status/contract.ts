/** The RevalidationStatuses port's contract: the latest status of an effect, none for an unknown one. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { RevalidationStatus } from '../../../../lambda/core/revalidate/ports.js';
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
  });
}
