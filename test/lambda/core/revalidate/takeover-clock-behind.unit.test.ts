/**
 * Found by reading `markBatch` while modelling a second revalidation of a tag (the model
 * check's plans had not hit it): an in-progress entry went to the LATER time, so a
 * revalidation accepted second on a clock behind the first's (or in the same millisecond) was
 * refused the entry; its own fan-out then took itself for superseded and stopped, while the
 * first one's fan-out was already past the pages rendered between its marks and the second
 * 202. Once the first ended, such a page was served HIT although rendered before the second
 * revalidation. The last writer now owns the entry, on every shard at once, and its time never
 * goes back.
 */
import { describe, expect, it } from '@jest/globals';
import type { Clock } from '../../../../lambda/core/clock.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import { acceptRevalidation } from '../../../../lambda/core/revalidate/fan-out.js';
import { backgroundService } from '../../../helpers/fan-out.js';

const shifted = (clock: Clock, ms: number): Clock => ({
  now: () => clock.now() + ms,
  sleep: (duration, signal) => clock.sleep(duration, signal),
});

/** Two pages of a tag; the first revalidation marks one of them, which is rendered again. */
async function markedAndRenderedAgain() {
  const ctx = backgroundService({ batchSize: 1 });
  await ctx.get('/a');
  await ctx.get('/b');
  await acceptRevalidation(ctx.deps, ctx.revalidation());
  expect((await ctx.drain(1)).map((step) => step.outcome)).toEqual(['marked']);
  const pk = (path: string) => ctx.keyFor(path).pk;
  const marked = ['/a', '/b'].find(
    (path) => ctx.state.metas.get(pk(path))?.revalidateSeconds === 0,
  );
  const cacheKey = ctx.keyFor(marked ?? '');
  await regenerate(ctx.regenerateDeps, { cacheKey, need: { kind: 'intent' } });
  return { ctx, path: marked ?? '' };
}

describe('a second revalidation of a tag while the first marks', () => {
  it('on a clock behind the first, still covers a page rendered before it', async () => {
    const { ctx, path } = await markedAndRenderedAgain();
    const second = ctx.revalidation();
    await acceptRevalidation({ ...ctx.deps, clock: shifted(ctx.deps.clock, -1_000) }, second);
    await ctx.drain();
    expect(await ctx.deps.statuses.get(second.effectId)).toMatchObject({ state: 'done' });
    ctx.clock.advance(3); // past the skew margin: only a mark makes the page stale now
    expect((await ctx.get(path)).cacheStatus).toBe('STALE');
  });

  it('with none, the page rendered again after the mark is a HIT (control)', async () => {
    const { ctx, path } = await markedAndRenderedAgain();
    await ctx.drain();
    ctx.clock.advance(3);
    expect((await ctx.get(path)).cacheStatus).toBe('HIT');
  });
});
