import { describe, expect, it } from '@jest/globals';
import type {
  InProgressEntry,
  RevalidationsInProgress,
} from '../../../../lambda/core/page/ports.js';
import { InProgressReader } from '../../../../lambda/core/page/in-progress.js';
import { TestClock } from '../../../helpers/clock.js';

/** In-progress rows whose reads the test answers by hand, each read recorded with its shard. */
function rowsByHand() {
  const reads: { tenant: string | undefined; shard: number; answer: (ok: boolean) => void }[] = [];
  const rows: RevalidationsInProgress = {
    begin: () => Promise.resolve(),
    end: () => Promise.resolve(true),
    read: (tenant, shard) =>
      new Promise<ReadonlyMap<string, InProgressEntry>>((resolve, reject) => {
        reads.push({
          tenant,
          shard,
          answer: (ok) => (ok ? resolve(new Map()) : reject(new Error('throttled'))),
        });
      }),
  };
  return { rows, reads };
}

describe('InProgressReader', () => {
  const key = (hash: string, tenant?: string) => ({ hash, tenant });

  it('reads one shard per container, picked at random, whatever the key', () => {
    const { rows, reads } = rowsByHand();
    const clock = new TestClock();
    const reader = new InProgressReader({ rows, shards: 4, cacheMs: 250 }, clock, () => 0.6);
    void reader.read(key('00000000'));
    clock.advanceMs(300);
    void reader.read(key('ffffffff'));
    expect(reads.map((read) => read.shard)).toEqual([2, 2]);
    const last = new InProgressReader({ rows, shards: 4, cacheMs: 250 }, clock, () => 0.999);
    void last.read(key('00000000'));
    expect(reads.at(-1)?.shard).toBe(3);
  });

  it('reuses a read for cacheMs from when it STARTED, however late it answered', async () => {
    const { rows, reads } = rowsByHand();
    const clock = new TestClock();
    const reader = new InProgressReader({ rows, shards: 4, cacheMs: 250 }, clock, () => 0);
    const first = reader.read(key('a'));
    clock.advanceMs(249);
    expect(reader.read(key('b'))).toBe(first); // the same read, still in flight
    expect(reads).toHaveLength(1);
    reads[0]?.answer(true);
    await first;
    // Answered at 249 ms, started at 0: at 250 ms it is too old, so a request that began after
    // a 202 (which waits 250 ms after its writes) never uses a read that began before them.
    clock.advanceMs(1);
    void reader.read(key('c'));
    expect(reads).toHaveLength(2);
  });

  it('keeps one read per tenant, and drops a failed read at once', async () => {
    const { rows, reads } = rowsByHand();
    const clock = new TestClock();
    const reader = new InProgressReader({ rows, shards: 4, cacheMs: 250 }, clock, () => 0);
    const acme = reader.read(key('a', 'acme'));
    void reader.read(key('a', 'globex'));
    expect(reads.map((read) => read.tenant)).toEqual(['acme', 'globex']);
    reads[0]?.answer(false);
    await expect(acme).rejects.toThrow('throttled');
    void reader.read(key('b', 'acme'));
    expect(reads).toHaveLength(3); // read again, not the failure kept for 250 ms
  });
});
