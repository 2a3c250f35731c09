import { describe, expect, it } from '@jest/globals';
import { fanOutSortKey } from '../../../../lambda/adapters/fan-out-progress/keys.js';
import { InMemoryFanOutProgressRows } from '../../../../lambda/adapters/fan-out-progress/memory.js';
import type { InMemoryRevalidationStatuses } from '../../../../lambda/adapters/revalidation-status/memory.js';
import type { MemoryTable } from '../../../../lambda/adapters/shared/memory-table.js';
import type { FanOutProgressRows } from '../../../../lambda/core/revalidate/ports.js';
import { parseFanOut } from '../../../../lambda/core/revalidate/fan-out-message.js';
import {
  acceptRevalidation,
  COUNTED_PAGES_PER_TAG,
  markBatch,
  resumeStalledFanOuts,
  type FanOutDeps,
} from '../../../../lambda/core/revalidate/fan-out.js';
import { TransactionConflictError } from '../../../../lambda/core/errors.js';
import { revalidate } from '../../../../lambda/core/revalidate/revalidation.js';
import { backgroundService, counted } from '../../../helpers/fan-out.js';

/** Progress rows whose advance ignores the cursor it read (the guard removed). */
function blindProgress(state: MemoryTable, statuses: InMemoryRevalidationStatuses) {
  const rows: FanOutProgressRows = new InMemoryFanOutProgressRows(state, statuses);
  rows.advance = (progress, input) => {
    const row = state.fanOuts.get(fanOutSortKey(progress));
    if (row === undefined) return Promise.resolve(false);
    const marked = row.marked + input.counts.marked;
    state.fanOuts.set(fanOutSortKey(progress), { ...row, cursor: input.to, marked });
    statuses.count(progress.effectId, input.counts);
    return Promise.resolve(true);
  };
  return rows;
}

/** `deps` with every port counted, calls by name in order. */
function countedDeps(deps: FanOutDeps, calls: string[]): FanOutDeps {
  return {
    ...deps,
    marks: counted('marks', deps.marks, calls),
    tagIndex: counted('tagIndex', deps.tagIndex, calls),
    queue: counted('queue', deps.queue, calls),
    cdn: counted('cdn', deps.cdn, calls),
    inProgress: counted('inProgress', deps.inProgress, calls),
    progress: counted('progress', deps.progress, calls),
    fanOutQueue: counted('fanOutQueue', deps.fanOutQueue, calls),
    statuses: counted('statuses', deps.statuses, calls),
  };
}

/** A service whose tag `post` indexes `pages` pages (index rows only: marking finds no META). */
async function indexed(pages: number) {
  const ctx = backgroundService();
  for (let page = 0; page < pages; page += 1) {
    await ctx.tagIndex.add(undefined, `CACHE#${String(page).padStart(6, '0')}`, ['post']);
  }
  return ctx;
}

describe('acceptRevalidation (unit, in-memory ports)', () => {
  it('makes the same port calls before its 202 for 1 page and for 1,000 pages', async () => {
    const callsFor = async (pages: number, apply: typeof acceptRevalidation) => {
      const ctx = await indexed(pages);
      const calls: string[] = [];
      await apply(countedDeps(ctx.deps, calls), ctx.revalidation());
      return calls.sort();
    };
    const one = await callsFor(1, acceptRevalidation);
    expect(await callsFor(1_000, acceptRevalidation)).toEqual(one);
    expect(one.filter((call) => call.startsWith('marks.'))).toEqual([]);
    // Control: marking every page before the answer (revalidate) makes calls per page.
    const sync = (deps: FanOutDeps, r: Parameters<typeof revalidate>[1]) =>
      revalidate(deps, r).then((effect) => ({
        ...effect,
        marking: { tags: 0, expected: { count: 0, exact: true } },
      }));
    expect((await callsFor(1_000, sync)).length).toBeGreaterThan((await callsFor(1, sync)).length);
  });

  it("reports in the 202, and keeps on the status, the pages it will mark: a tag's counted up to a bound", async () => {
    const small = await indexed(3);
    expect((await acceptRevalidation(small.deps, small.revalidation())).marking).toEqual({
      tags: 1,
      expected: { count: 3, exact: true },
    });
    const big = await indexed(COUNTED_PAGES_PER_TAG + 1);
    const revalidation = big.revalidation();
    const accepted = await acceptRevalidation(big.deps, revalidation);
    const past = { count: COUNTED_PAGES_PER_TAG + 1, exact: false }; // the fake's estimate is exact
    expect(accepted.marking).toEqual({ tags: 1, expected: past });
    expect((await big.deps.statuses.get(revalidation.effectId))?.expected).toEqual(past);
  });

  it('after the 202 and before any batch, a fresh tagged page is STALE (stale) or MISS (expire); without the check it is a HIT', async () => {
    for (const [mode, expected, body] of [
      ['stale', 'STALE', '#1'],
      ['expire', 'MISS', '#2'],
    ] as const) {
      const ctx = backgroundService();
      const control = backgroundService({ withCheck: false });
      for (const c of [ctx, control]) {
        await c.get('/blog/a');
        expect((await c.get('/blog/a')).cacheStatus).toBe('HIT');
        await acceptRevalidation(c.deps, c.revalidation({ mode }));
        expect(c.queue.fanOuts).toHaveLength(1); // no batch has run
      }
      const answer = await ctx.get('/blog/a');
      expect(answer.cacheStatus).toBe(expected);
      expect(new TextDecoder().decode(answer.body)).toContain(body);
      expect((await control.get('/blog/a')).cacheStatus).toBe('HIT');
    }
  });

  it('a render started in the revalidation second counts as older; one started after the margin is a HIT', async () => {
    const ctx = backgroundService();
    await ctx.get('/blog/other'); // the tag has a page: its fan-out runs, its entries are written
    await acceptRevalidation(ctx.deps, ctx.revalidation());
    // The page is first rendered 1 s after the revalidation: within the 2 s skew margin.
    ctx.clock.advance(1);
    await ctx.get('/blog/a');
    expect((await ctx.get('/blog/a')).cacheStatus).toBe('STALE');
    const later = backgroundService();
    await later.get('/blog/other');
    await acceptRevalidation(later.deps, later.revalidation());
    later.clock.advance(3);
    await later.get('/blog/a');
    expect((await later.get('/blog/a')).cacheStatus).toBe('HIT');
  });

  it("a tag with no pages costs one write (its time) and one read: no entries, no step; the 202 still waits out data caches' tag-time reads", async () => {
    const ctx = backgroundService();
    const calls: string[] = [];
    const revalidation = ctx.revalidation();
    const slept: number[] = [];
    const deps = {
      ...countedDeps(ctx.deps, calls),
      clock: {
        now: () => ctx.clock.now(),
        sleep: (ms: number) => (slept.push(ms), Promise.resolve()),
      },
    };
    const accepted = await acceptRevalidation(deps, revalidation);
    expect(
      calls.filter((call) => !call.startsWith('statuses.') && !call.startsWith('cdn.')),
    ).toEqual(['tagIndex.recordRevalidation', 'tagIndex.pages']);
    expect(slept).toEqual([ctx.deps.inProgressCacheMs]);
    expect(ctx.queue.fanOuts).toHaveLength(0);
    expect(accepted.marking.tags).toBe(0);
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({ state: 'done' });
    // The tag's time is what a render that gives a page the tag later compares its start with.
    expect(await ctx.tagIndex.revalidatedAt(undefined, ['post'])).toEqual(
      new Map([['post', ctx.clock.now()]]),
    );
  });

  it('the revalidation accepted last owns an entry, even on a clock behind; stale and expire stay apart', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const first = ctx.revalidation();
    await acceptRevalidation(ctx.deps, first);
    const atMs = (await ctx.inProgress.read(undefined, 0)).get('stale#post')?.atMs ?? 0;
    // Accepted after the first, on a clock a second behind it: it still takes the entry over,
    // and the entry's time does not go back.
    const behind = { now: () => ctx.clock.now() - 1_000, sleep: ctx.deps.clock.sleep };
    const second = ctx.revalidation();
    await acceptRevalidation({ ...ctx.deps, clock: behind }, second);
    const expired = ctx.revalidation({ mode: 'expire' });
    await acceptRevalidation(ctx.deps, expired);
    for (let shard = 0; shard < 4; shard += 1) {
      const state = await ctx.inProgress.read(undefined, shard);
      expect(state.get('stale#post')).toEqual({ atMs: atMs + 1, effectId: second.effectId });
      expect(state.get('expire#post')?.effectId).toBe(expired.effectId);
    }
  });
});

describe('markBatch (unit, in-memory ports)', () => {
  it('marks every page in batches, then removes its entries from every shard and is done', async () => {
    const ctx = backgroundService({ tagsOf: () => ['post'], batchSize: 2 });
    for (const path of ['/a', '/b', '/c', '/d', '/e']) await ctx.get(path);
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    const steps = await ctx.drain();
    expect(steps.map((step) => step.outcome)).toEqual(['marked', 'marked', 'done']);
    const status = await ctx.deps.statuses.get(revalidation.effectId);
    expect(status).toMatchObject({ state: 'done', marked: 5, pages: 5 });
    for (let shard = 0; shard < 4; shard += 1) {
      expect((await ctx.inProgress.read(undefined, shard)).size).toBe(0);
    }
    expect(ctx.state.fanOuts.size).toBe(0);
    expect([...ctx.state.metas.values()].every((meta) => meta.revalidateSeconds === 0)).toBe(true);
  });

  it('a superseded fan-out stops and counts itself done; alone, it marks', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const first = ctx.revalidation();
    await acceptRevalidation(ctx.deps, first);
    const second = ctx.revalidation();
    await acceptRevalidation(ctx.deps, second);
    const steps = await ctx.drain();
    expect(steps.map((step) => step.outcome)).toEqual(['superseded', 'done']);
    expect(await ctx.deps.statuses.get(first.effectId)).toMatchObject({ state: 'done', marked: 0 });
    expect(await ctx.deps.statuses.get(second.effectId)).toMatchObject({ marked: 1 });
  });

  it('a duplicate step neither doubles `marked` nor moves the cursor; without the cursor condition it does', async () => {
    const run = async (blind: boolean) => {
      const ctx = backgroundService({ batchSize: 2 });
      for (const path of ['/a', '/b', '/c', '/d', '/e']) await ctx.get(path);
      if (blind) {
        const statuses = ctx.deps.statuses as InMemoryRevalidationStatuses;
        Object.assign(ctx.deps, { progress: blindProgress(ctx.state, statuses) });
      }
      const revalidation = ctx.revalidation();
      await acceptRevalidation(ctx.deps, revalidation);
      // Two copies of the first step run at once: both read the cursor before either moves it.
      const first = parseFanOut(ctx.queue.fanOuts.shift()?.body ?? '');
      const copies = await Promise.all([markBatch(ctx.deps, first), markBatch(ctx.deps, first)]);
      expect(copies.map((step) => step.outcome).sort()).toEqual(
        blind ? ['marked', 'marked'] : ['duplicate', 'marked'],
      );
      await ctx.drain();
      return (await ctx.deps.statuses.get(revalidation.effectId))?.marked;
    };
    expect(await run(false)).toBe(5);
    // Control: an advance that ignores the cursor it read lets both copies count their batch.
    expect(await run(true)).toBe(7);
  });

  it('a step that died after moving the cursor, before queuing the next: its redelivery queues it', async () => {
    const ctx = backgroundService({ batchSize: 2 });
    for (const path of ['/a', '/b', '/c']) await ctx.get(path);
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    const first = parseFanOut(ctx.queue.fanOuts.shift()?.body ?? '');
    const send = ctx.queue.sendFanOut.bind(ctx.queue);
    ctx.queue.sendFanOut = () => Promise.reject(new Error('crashed before the send'));
    await expect(markBatch(ctx.deps, first)).rejects.toThrow('crashed before the send');
    ctx.queue.sendFanOut = send;
    expect(ctx.queue.fanOuts).toHaveLength(0);
    expect(await markBatch(ctx.deps, first)).toMatchObject({ outcome: 'duplicate' });
    expect(ctx.queue.fanOuts).toHaveLength(1); // the next step, queued again
    expect((await ctx.drain()).map((step) => step.outcome)).toEqual(['done']);
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({
      state: 'done',
      marked: 3, // the first batch counted once, with its cursor move
    });
  });

  it('tries a step again when the status row was busy, without marking its batch twice', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    const finish = ctx.deps.progress.finish.bind(ctx.deps.progress);
    let conflicts = 1;
    const writes: string[] = [];
    Object.assign(ctx.deps, {
      marks: counted('marks', ctx.deps.marks, writes),
      progress: Object.assign(Object.create(ctx.deps.progress) as object, {
        finish: (...args: Parameters<typeof finish>) =>
          conflicts-- > 0
            ? Promise.reject(new TransactionConflictError('status row busy'))
            : finish(...args),
      }),
    });
    expect((await ctx.drain()).map((step) => step.outcome)).toEqual(['done']);
    expect(writes.filter((call) => call === 'marks.markStale')).toHaveLength(1);
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({ state: 'done' });
  });

  it('the sweeper resends a fan-out that stopped, and leaves a recent one alone', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    ctx.queue.fanOuts.splice(0); // the step is lost
    const sweep = () => resumeStalledFanOuts(ctx.deps, { stalledAfterMs: 300_000, limit: 10 });
    ctx.clock.advance(100);
    expect(await sweep()).toEqual([]);
    expect(ctx.queue.fanOuts).toHaveLength(0);
    ctx.clock.advance(201);
    expect(await sweep()).toHaveLength(1);
    expect((await ctx.drain()).map((step) => step.outcome)).toEqual(['done']);
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({ state: 'done' });
  });

  it('the last batch removes its entries only while they are its own', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    // A later revalidation of the tag takes the entry over between this step's check and its end.
    const read = ctx.inProgress.read.bind(ctx.inProgress);
    Object.assign(ctx.deps, {
      inProgress: Object.assign(Object.create(ctx.inProgress) as object, {
        read: async (tenant: string | undefined, shard: number) => {
          const state = await read(tenant, shard);
          const key = 'stale#post';
          await ctx.inProgress.begin(undefined, 4, { key, atMs: 9e15, effectId: 'rv_later' });
          return state;
        },
      }),
    });
    expect((await ctx.drain()).map((step) => step.outcome)).toEqual(['done']);
    for (let shard = 0; shard < 4; shard += 1) {
      const state = await ctx.inProgress.read(undefined, shard);
      expect(state.get('stale#post')?.effectId).toBe('rv_later');
    }
  });
});
