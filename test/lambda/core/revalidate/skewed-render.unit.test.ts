/**
 * Found by the model check (a `stale` revalidation, actors' clocks skewed): a page rendered
 * on a clock running ahead of the origin's carries a `generated_at` in the origin's future. A
 * stale mark sets `revalidate_seconds = 0`, so `now < generated_at + 0` still held on the
 * origin's clock, and a request after the 202 was answered HIT with the page from before it.
 */
import { describe, expect, it } from '@jest/globals';
import type { Clock } from '../../../../lambda/core/clock.js';
import { acceptRevalidation } from '../../../../lambda/core/revalidate/fan-out.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { backgroundService } from '../../../helpers/fan-out.js';

/** The service's clock, `seconds` ahead (within the 2 s clock-skew margin the service allows). */
const ahead = (clock: Clock, seconds: number): Clock => ({
  now: () => clock.now() + seconds * 1000,
  sleep: (ms, signal) => clock.sleep(ms, signal),
});

/** A page first rendered by an origin whose clock runs 2 s ahead; read back on the true clock. */
async function renderedAhead() {
  const ctx = backgroundService();
  const skewed = { ...ctx.originDeps, clock: ahead(ctx.clock, 2) };
  const get = { method: 'GET', rawPath: '/blog/a', rawQueryString: '', tenant: undefined };
  expect((await servePage(skewed, { ...get, ifNoneMatch: undefined })).cacheStatus).toBe('MISS');
  expect((await ctx.get('/blog/a')).cacheStatus).toBe('HIT');
  return ctx;
}

describe('a page rendered on a clock ahead of the origin’s', () => {
  it('is not served fresh once a `stale` revalidation has marked it', async () => {
    const ctx = await renderedAhead();
    await acceptRevalidation(ctx.deps, ctx.revalidation());
    await ctx.drain(); // every page marked, the in-progress entries gone
    expect((await ctx.get('/blog/a')).cacheStatus).toBe('STALE');
  });

  it('is still a HIT without a revalidation (control: the page itself is fresh)', async () => {
    const ctx = await renderedAhead();
    ctx.clock.advance(1);
    expect((await ctx.get('/blog/a')).cacheStatus).toBe('HIT');
  });
});
