/**
 * The RevalidationsInProgress port's contract: the last writer owns an entry on every shard at
 * once and its time never goes back, `stale` and `expire` entries never merge, and only the
 * effect that owns an entry removes it.
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

    it('the last writer owns an entry on every shard, and its time never goes back; modes apart', async () => {
      const rows = s.inProgress;
      await rows.begin(undefined, 2, { key: 'stale#post', atMs: 2_000, effectId: 'rv_b' });
      // Written last, on a clock behind: it owns the entry, one millisecond past the other.
      await rows.begin(undefined, 2, { key: 'stale#post', atMs: 1_000, effectId: 'rv_a' });
      await rows.begin(undefined, 2, { key: 'expire#post', atMs: 500, effectId: 'rv_c' });
      for (const shard of [0, 1]) {
        const state = await rows.read(undefined, shard);
        expect(state.get('stale#post')).toEqual({ atMs: 2_001, effectId: 'rv_a' });
        expect(state.get('expire#post')).toEqual({ atMs: 500, effectId: 'rv_c' });
      }
      // A later time is kept as it is; the same effect again keeps its time.
      await rows.begin(undefined, 2, { key: 'stale#post', atMs: 3_000, effectId: 'rv_d' });
      await rows.begin(undefined, 2, { key: 'stale#post', atMs: 3_000, effectId: 'rv_d' });
      expect((await rows.read(undefined, 1)).get('stale#post')).toEqual({
        atMs: 3_000,
        effectId: 'rv_d',
      });
    });

    it('removes an entry from every shard, only for the effect that owns it; tenants are apart', async () => {
      const rows = s.inProgress;
      await rows.begin(undefined, 4, { key: 'stale#post', atMs: 2_000, effectId: 'rv_b' });
      await rows.begin('t1', 1, { key: 'stale#post', atMs: 2_000, effectId: 'rv_t' });
      expect(await rows.end(undefined, 4, 'stale#post', 'rv_a')).toBe(false);
      expect((await rows.read(undefined, 3)).get('stale#post')?.effectId).toBe('rv_b');
      expect(await rows.end(undefined, 4, 'stale#post', 'rv_b')).toBe(true);
      for (const shard of [0, 1, 2, 3]) expect((await rows.read(undefined, shard)).size).toBe(0);
      expect((await rows.read('t1', 0)).get('stale#post')?.effectId).toBe('rv_t');
    });
  });
}
