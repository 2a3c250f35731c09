/**
 * The StatusIndexReader port's contract: one shard read oldest `status_at` first, a bounded page
 * at a time, saying whether it holds more; each row with who held it and why it failed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

export function statusIndexReaderContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`StatusIndexReader contract (${name})`, () => {
    let s: TableSubject;
    let shards = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    it('reads a shard oldest first, at most the limit; a full page says the shard may hold more', async () => {
      const shard = `FAILED#contract-${++shards}`;
      for (const at of [30, 10, 20]) {
        await s.indexRow(shard, { pk: `CACHE#${at}`, sk: 'REQ#m', at });
      }
      const first = await s.statusIndex.readShard(shard, 2);
      expect(first.rows.map((row) => row.at)).toEqual([10, 20]);
      expect(first.truncated).toBe(true);
      const exactly = await s.statusIndex.readShard(shard, 3);
      expect(exactly.rows.map((row) => row.at)).toEqual([10, 20, 30]);
      expect(exactly.truncated).toBe(true); // a full page cannot tell
      const all = await s.statusIndex.readShard(shard, 4);
      expect(all.rows).toHaveLength(3);
      expect(all.truncated).toBe(false);
    });

    it('tells who held the work, why it failed, and its page', async () => {
      const shard = `FAILED#contract-${++shards}`;
      const row = {
        pk: 'CACHE#h',
        sk: 'REQ#m1',
        at: 100,
        owner: 'isr-worker/req-1',
        errorCode: 'refused:status',
        error: 'the renderer answered 403',
        cacheKey: '/a',
      };
      await s.indexRow(shard, row);
      expect((await s.statusIndex.readShard(shard, 10)).rows).toEqual([row]);
    });

    it('reads nothing from an empty shard', async () => {
      expect(await s.statusIndex.readShard(`LEASE#contract-${++shards}`, 10)).toEqual({
        rows: [],
        truncated: false,
      });
    });
  });
}
