/**
 * Found by the model check (a fan-out step crashed after one of its writes): a fan-out's last
 * step deleted its progress row, then counted itself done on the status. When the count failed
 * (a throttle, a crash), the step was redelivered, found no progress row, took itself for a
 * late duplicate, and the status stayed `marking` for good. The row's deletion and the count are
 * now one transaction (`FanOutProgressRows.finish`): either both happen or neither does.
 */
import { describe, expect, it } from '@jest/globals';
import type { FanOutProgressRows } from '../../../../lambda/core/revalidate/ports.js';
import type { RevalidationsInProgress } from '../../../../lambda/core/page/ports.js';
import { parseFanOut } from '../../../../lambda/core/revalidate/fan-out-message.js';
import { acceptRevalidation, markBatch } from '../../../../lambda/core/revalidate/fan-out.js';
import { backgroundService } from '../../../helpers/fan-out.js';

/** The progress rows, whose first `finish` fails as a throttled transaction would. */
function throttledOnce(real: FanOutProgressRows): FanOutProgressRows {
  let failed = false;
  return Object.assign(Object.create(real) as FanOutProgressRows, {
    finish: (...args: Parameters<FanOutProgressRows['finish']>) => {
      if (failed) return real.finish(...args);
      failed = true;
      return Promise.reject(new Error('ThrottlingException (injected)'));
    },
  });
}

describe('the last step of a fan-out', () => {
  it('redelivered after its finish failed, makes the status done', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    const step = parseFanOut(ctx.queue.fanOuts.shift()?.body ?? '');
    const deps = { ...ctx.deps, progress: throttledOnce(ctx.deps.progress) };
    await expect(markBatch(deps, step)).rejects.toThrow('ThrottlingException');
    // Neither half happened: the row is still there, the status still marking.
    expect(ctx.state.fanOuts.size).toBe(1);
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({
      state: 'marking',
    });
    // SQS delivers the step again.
    expect((await markBatch(deps, step)).outcome).toBe('done');
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({
      state: 'done',
      fanOuts: 0,
      marked: 1,
    });
  });

  it('redelivered after a crash between its finish and its entries removal, removes them', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    const step = parseFanOut(ctx.queue.fanOuts.shift()?.body ?? '');
    const crashed: RevalidationsInProgress = Object.assign(
      Object.create(ctx.inProgress) as RevalidationsInProgress,
      { end: () => Promise.reject(new Error('crashed (injected)')) },
    );
    await expect(markBatch({ ...ctx.deps, inProgress: crashed }, step)).rejects.toThrow('crashed');
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({ state: 'done' });
    expect((await ctx.inProgress.read(undefined, 0)).size).toBe(1);
    expect((await markBatch(ctx.deps, step)).outcome).toBe('duplicate');
    for (let shard = 0; shard < 4; shard += 1) {
      expect((await ctx.inProgress.read(undefined, shard)).size).toBe(0);
    }
  });

  it('delivered again once done, counts nothing twice (control: the status is done once)', async () => {
    const ctx = backgroundService({ tagsOf: (path) => (path === '/a' ? ['post'] : ['other']) });
    await ctx.get('/a');
    await ctx.get('/b');
    const revalidation = ctx.revalidation({ tags: ['post', 'other'] });
    await acceptRevalidation(ctx.deps, revalidation);
    const [post] = ctx.queue.fanOuts.splice(0, 1).map((queued) => parseFanOut(queued.body));
    expect((await markBatch(ctx.deps, post)).outcome).toBe('done');
    expect((await markBatch(ctx.deps, post)).outcome).toBe('duplicate');
    // `post` counted once: the revalidation still waits for `other`.
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({
      state: 'marking',
      fanOuts: 1,
    });
    await ctx.drain();
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({ state: 'done' });
  });
});
