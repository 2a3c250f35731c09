/**
 * The RevalidationsInProgress port's contract: the later time wins an entry, `stale` and
 * `expire` entries never merge, and only the effect that set an entry removes it.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

export function revalidationsInProgressContract(
  name: string,
  make: () => Promise<TableSubject>,
): void {
  describe(`RevalidationsInProgress contract (${name})`, () => {
    let s: TableSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('keeps the later of two entries for a key, whichever lands last, and modes apart', async () => {
      const rows = s.inProgress;
      await rows.begin(undefined, 1, { key: 'stale#post', atMs: 2_000, effectId: 'rv_b' });
      await rows.begin(undefined, 1, { key: 'stale#post', atMs: 1_000, effectId: 'rv_a' });
      await rows.begin(undefined, 1, { key: 'expire#post', atMs: 500, effectId: 'rv_c' });
      const state = await rows.read(undefined, 1);
      expect(state.get('stale#post')).toEqual({ atMs: 2_000, effectId: 'rv_b' });
      expect(state.get('expire#post')).toEqual({ atMs: 500, effectId: 'rv_c' });
      // Control: a later time does replace it.
      await rows.begin(undefined, 1, { key: 'stale#post', atMs: 3_000, effectId: 'rv_d' });
      expect((await rows.read(undefined, 1)).get('stale#post')?.effectId).toBe('rv_d');
    });

    it('removes an entry only for the effect that holds it; shards and tenants are apart', async () => {
      const rows = s.inProgress;
      await rows.begin(undefined, 0, { key: 'stale#post', atMs: 2_000, effectId: 'rv_b' });
      await rows.begin(undefined, 3, { key: 'stale#post', atMs: 2_000, effectId: 'rv_b' });
      await rows.begin('t1', 0, { key: 'stale#post', atMs: 2_000, effectId: 'rv_t' });
      expect(await rows.end(undefined, 0, 'stale#post', 'rv_a')).toBe(false);
      expect((await rows.read(undefined, 0)).get('stale#post')?.effectId).toBe('rv_b');
      expect(await rows.end(undefined, 0, 'stale#post', 'rv_b')).toBe(true);
      expect((await rows.read(undefined, 0)).size).toBe(0);
      expect((await rows.read(undefined, 3)).size).toBe(1);
      expect((await rows.read('t1', 0)).get('stale#post')?.effectId).toBe('rv_t');
      expect((await rows.read(undefined, 2)).size).toBe(0);
    });
  });
}
