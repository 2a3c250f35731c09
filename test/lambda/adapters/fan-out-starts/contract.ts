/**
 * The FanOutStarts port's contract: a fan-out starts whole (its count on the status, its entry
 * on every shard, its progress row) or not at all; the last writer owns an entry and its time
 * never goes back; the same effect never starts a fan-out twice; tenants are apart. The conflict
 * case runs where the subject follows AWS's transaction conflict rule (DynamoDB Local does not
 * show it: it serialises transactions).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { TransactionConflictError } from '../../../../lambda/core/errors.js';
import type {
  FanOutProgress,
  FanOutStart,
  RevalidationStatus,
} from '../../../../lambda/core/revalidate/ports.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const effect = (letter: string) => `rv_${letter.repeat(32)}`;

const status = (effectId: string, tenant?: string): RevalidationStatus => ({
  effectId,
  tenant,
  mode: 'stale',
  regenerate: false,
  state: 'marking',
  pages: 1,
  marked: 1,
  regenerations: 0,
  held: 0,
  heldPages: [],
  acceptedAtMs: 1_000,
});

const fanOut = (effectId: string, tag: string, tenant?: string): FanOutProgress => ({
  tenant,
  effectId,
  mode: 'stale',
  tag,
  regenerate: false,
  cursor: '',
  updatedAtMs: 1_000,
  marked: 0,
});

/** A start of `tags` by `effectId` at `atMs`, on `shards` shards. */
const startOf = (
  effectId: string,
  tags: readonly string[],
  options: { atMs?: number; shards?: number; tenant?: string } = {},
): FanOutStart => ({
  status: status(effectId, options.tenant),
  shards: options.shards ?? 2,
  fanOuts: tags.map((tag) => fanOut(effectId, tag, options.tenant)),
  atMs: options.atMs ?? 1_000,
});

export function fanOutStartContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`FanOutStarts contract (${name})`, () => {
    let s: TableSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('starts each fan-out whole: its count on the status, its entry on every shard, its row', async () => {
      const a = effect('a');
      expect(await s.fanOutStarts.start(startOf(a, ['post', 'news'], { shards: 3 }))).toEqual([
        'post',
        'news',
      ]);
      expect(await s.revalidationStatuses.get(a)).toMatchObject({ state: 'marking', fanOuts: 2 });
      for (const shard of [0, 1, 2]) {
        const state = await s.inProgress.read(undefined, shard);
        expect(state.get('stale#post')).toEqual({ atMs: 1_000, effectId: a });
        expect(state.get('stale#news')).toEqual({ atMs: 1_000, effectId: a });
      }
      expect(await s.fanOutProgress.get(fanOut(a, 'news'))).toEqual(fanOut(a, 'news'));
    });

    it('never starts a fan-out of the same effect twice, even once it has finished', async () => {
      const a = effect('a');
      await s.fanOutStarts.start(startOf(a, ['post']));
      const done = { from: '', counts: { marked: 1, regenerations: 0 }, atMs: 2_000 };
      expect(await s.fanOutProgress.finish(fanOut(a, 'post'), done)).toBe(true);
      expect(await s.inProgress.end(undefined, 2, 'stale#post', a)).toBe(true);
      // The effect's Idempotency-Key retry, after a crash: `news` is new, `post` is not.
      expect(await s.fanOutStarts.start(startOf(a, ['post', 'news'], { atMs: 5_000 }))).toEqual([
        'news',
      ]);
      expect(await s.fanOutProgress.get(fanOut(a, 'post'))).toBeUndefined();
      expect((await s.inProgress.read(undefined, 1)).has('stale#post')).toBe(false);
      expect(await s.revalidationStatuses.get(a)).toMatchObject({
        state: 'marking',
        fanOuts: 1,
        marked: 2, // the finished batch's count is kept
      });
    });

    it('the last writer owns an entry on every shard, and its time never goes back; modes apart', async () => {
      await s.fanOutStarts.start(startOf(effect('b'), ['post'], { atMs: 2_000 }));
      // Written last, on a clock behind: it owns the entry, one millisecond past the other.
      await s.fanOutStarts.start(startOf(effect('a'), ['post'], { atMs: 1_000 }));
      const expire = { ...startOf(effect('c'), ['post'], { atMs: 500 }) };
      await s.fanOutStarts.start({
        ...expire,
        fanOuts: expire.fanOuts.map((row) => ({ ...row, mode: 'expire' as const })),
      });
      for (const shard of [0, 1]) {
        const state = await s.inProgress.read(undefined, shard);
        expect(state.get('stale#post')).toEqual({ atMs: 2_001, effectId: effect('a') });
        expect(state.get('expire#post')).toEqual({ atMs: 500, effectId: effect('c') });
      }
      // A later time is kept as it is.
      await s.fanOutStarts.start(startOf(effect('d'), ['post'], { atMs: 3_000 }));
      expect((await s.inProgress.read(undefined, 1)).get('stale#post')).toEqual({
        atMs: 3_000,
        effectId: effect('d'),
      });
    });

    it('keeps tenants apart', async () => {
      await s.fanOutStarts.start(startOf(effect('a'), ['post'], { tenant: 't1', shards: 1 }));
      expect((await s.inProgress.read('t1', 0)).get('stale#post')?.effectId).toBe(effect('a'));
      expect((await s.inProgress.read(undefined, 0)).size).toBe(0);
      expect((await s.inProgress.read('t2', 0)).size).toBe(0);
    });

    it('starts a group of tags larger than one transaction holds', async () => {
      const tags = Array.from({ length: 60 }, (_, index) => `tag-${index}`);
      const a = effect('a');
      expect(await s.fanOutStarts.start(startOf(a, tags, { shards: 4 }))).toHaveLength(60);
      expect(await s.revalidationStatuses.get(a)).toMatchObject({ fanOuts: 60 });
      expect((await s.inProgress.read(undefined, 3)).size).toBe(60);
    });

    // What DynamoDB Local does not show: it serialises transactions, so none is ever cancelled.
    it('under conflicts (DynamoDB Local does not show them): each start lands whole or is refused whole', async () => {
      if (s.conflicts === undefined) return;
      const effects = 'abcdefgh'.split('').map(effect);
      const results = await Promise.allSettled(
        effects.map((id, index) => s.fanOutStarts.start(startOf(id, [`tag-${index}`, 'shared']))),
      );
      // Each start as it ended: refused with nothing written, or started with everything.
      const ends = await Promise.all(
        results.map(async (result, index) => {
          const id = effects[index];
          const written = [
            (await s.fanOutProgress.get(fanOut(id, `tag-${index}`))) !== undefined,
            (await s.inProgress.read(undefined, 1)).get(`stale#tag-${index}`)?.effectId === id,
            (await s.revalidationStatuses.get(id))?.fanOuts === 2,
          ];
          if (result.status === 'fulfilled') return written.every(Boolean) ? 'started' : 'half';
          const conflict = result.reason instanceof TransactionConflictError;
          return conflict && !written.some(Boolean) ? 'refused' : 'half';
        }),
      );
      expect(ends).not.toContain('half');
      expect(ends).toContain('refused');
      expect(ends).toContain('started');
    });
  });
}
