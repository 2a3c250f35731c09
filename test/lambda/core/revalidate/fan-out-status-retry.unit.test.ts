/**
 * Found by the model check (a fan-out step crashed after one of its writes): a fan-out's last
 * step deletes its progress row, then counts itself done on the status. When the count failed
 * (a throttle, a crash), the step was redelivered, found no progress row, took itself for a
 * late duplicate, and the status stayed `marking` for good.
 */
import { describe, expect, it } from '@jest/globals';
import type { RevalidationStatuses } from '../../../../lambda/core/ports.js';
import { parseFanOut } from '../../../../lambda/core/revalidate/fan-out-message.js';
import { acceptRevalidation, markBatch } from '../../../../lambda/core/revalidate/fan-out.js';
import { backgroundService } from '../../../helpers/fan-out.js';

/** The statuses, whose first `finishFanOut` fails as a throttled write would. */
function throttledOnce(real: RevalidationStatuses): RevalidationStatuses {
  let failed = false;
  return {
    put: (status) => real.put(status),
    get: (effectId) => real.get(effectId),
    addMarked: (effectId, counts) => real.addMarked(effectId, counts),
    finishFanOut: (...args: Parameters<RevalidationStatuses['finishFanOut']>) => {
      if (failed) return real.finishFanOut(...args);
      failed = true;
      return Promise.reject(new Error('ThrottlingException (injected)'));
    },
  };
}

describe('the last step of a fan-out', () => {
  it('redelivered after its status count failed, makes the status done', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const revalidation = ctx.revalidation();
    await acceptRevalidation(ctx.deps, revalidation);
    const step = parseFanOut(ctx.queue.fanOuts.shift()?.body ?? '');
    const deps = { ...ctx.deps, statuses: throttledOnce(ctx.deps.statuses) };
    await expect(markBatch(deps, step)).rejects.toThrow('ThrottlingException');
    expect(ctx.state.fanOuts.size).toBe(0); // the progress row went before the count failed
    // SQS delivers the step again.
    expect((await markBatch(deps, step)).outcome).toBe('duplicate');
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({
      state: 'done',
      fanOuts: 0,
    });
  });

  it('delivered again once done, counts nothing twice (control: the status is done once)', async () => {
    const ctx = backgroundService({ tagsOf: (path) => (path === '/a' ? ['post'] : ['other']) });
    await ctx.get('/a');
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
