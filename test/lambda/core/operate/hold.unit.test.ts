/**
 * A hold and its release, seen through an edge that keeps pages for their s-maxage: each records
 * who asked on META, and purges the page, so the edge serves what the operator held (negative
 * control: without the purge it keeps serving an earlier generation).
 */
import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { cdnKeyTagOf } from '../../../../lambda/core/page/cache-tags.js';
import { hold, release } from '../../../../lambda/core/operate/hold.js';
import type { PageOpsDeps } from '../../../../lambda/core/operate/page-ops.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import type { PageResponse } from '../../../../lambda/core/serve/responses.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import { TestEdgeCache } from '../../../helpers/shared-cache.js';

/**
 * /hello published as v1, kept by the edge as the STALE answer it got once v1 went stale, then
 * regenerated to v2 at the origin: the edge still has v1 for its short s-maxage.
 */
async function edgeBehindTheOrigin() {
  const counter = countingRenderer((_r, call) => htmlPage(`v${call}`, { revalidateSeconds: 10 }));
  const service = memoryService({ renderer: counter.renderer });
  const cacheKey = service.keyFor('/hello');
  const edge = new TestEdgeCache<PageResponse>(service.clock, service.originDeps.cacheTagHeader);
  const viewer = async () => {
    const answer = await edge.get('/hello', () =>
      servePage(service.originDeps, {
        method: 'GET',
        rawPath: '/hello',
        rawQueryString: '',
        tenant: undefined,
        ifNoneMatch: undefined,
      }),
    );
    return { text: new TextDecoder().decode(answer.body), from: answer.from };
  };
  const publish = () => regenerate(service.regenerateDeps, { cacheKey, need: { kind: 'intent' } });
  await publish();
  expect(await viewer()).toEqual({ text: 'v1', from: 'origin' });
  service.clock.advance(11);
  expect(await viewer()).toEqual({ text: 'v1', from: 'origin' }); // STALE, kept 2 s
  await publish();
  const ops = (cdn: PageOpsDeps['cdn']): PageOpsDeps => ({
    cacheTable: service.cacheTable,
    history: service.history,
    bodies: service.bodies,
    clock: service.clock,
    leaseSeconds: 30,
    cdn,
  });
  return { ...service, cacheKey, edge, viewer, ops };
}

describe('hold and release (unit, in-memory ports, an edge in front)', () => {
  it('a hold records who held the page and purges it: the edge serves the held generation at once', async () => {
    const ctx = await edgeBehindTheOrigin();
    const held = await hold(ctx.ops(ctx.edge), {
      cacheKey: ctx.cacheKey,
      holdSeconds: 3_600,
      actor: 'alice',
    });
    expect(held).toMatchObject({ decision: 'held', by: 'alice', cdn: { status: 'submitted' } });
    expect(ctx.edge.purges).toEqual([[cdnKeyTagOf(ctx.cacheKey)]]);
    expect(await ctx.cacheTable.getMeta(ctx.cacheKey.pk)).toMatchObject({
      held: { by: 'alice', at: ctx.clock.seconds },
      holdUntil: ctx.clock.seconds + 3_600,
    });
    ctx.clock.advance(1);
    expect(await ctx.viewer()).toEqual({ text: 'v2', from: 'origin' });
    // The edge keeps the held page for the rest of the hold.
    ctx.clock.advance(600);
    expect(await ctx.viewer()).toEqual({ text: 'v2', from: 'edge' });
  });

  it('negative control: a hold that purges nothing leaves viewers on the edge’s earlier copy', async () => {
    const ctx = await edgeBehindTheOrigin();
    const held = await hold(ctx.ops(undefined), {
      cacheKey: ctx.cacheKey,
      holdSeconds: 3_600,
      actor: 'alice',
    });
    expect(held.cdn).toEqual({ status: 'not-configured' });
    ctx.clock.advance(1);
    expect(await ctx.viewer()).toEqual({ text: 'v1', from: 'edge' });
  });

  it('a release records who lifted the hold beside who set it, and purges the held copy', async () => {
    const ctx = await edgeBehindTheOrigin();
    await hold(ctx.ops(ctx.edge), { cacheKey: ctx.cacheKey, holdSeconds: 3_600, actor: 'alice' });
    ctx.clock.advance(1);
    expect(await ctx.viewer()).toMatchObject({ text: 'v2' });
    ctx.clock.advance(60); // v2 stale long since; the edge keeps it as held
    expect(await ctx.viewer()).toEqual({ text: 'v2', from: 'edge' });

    const queued = ctx.queue.messages.length;
    const released = await release(ctx.ops(ctx.edge), { cacheKey: ctx.cacheKey, actor: 'bob' });
    expect(released).toMatchObject({ decision: 'released', by: 'bob' });
    expect(await ctx.cacheTable.getMeta(ctx.cacheKey.pk)).toMatchObject({
      held: { by: 'alice' },
      released: { by: 'bob', at: ctx.clock.seconds },
    });
    // Past the purge the origin answers: STALE, one regeneration queued.
    expect(await ctx.viewer()).toEqual({ text: 'v2', from: 'origin' });
    expect(ctx.queue.messages).toHaveLength(queued + 1);
    expect(await release(ctx.ops(ctx.edge), { cacheKey: ctx.cacheKey, actor: 'carol' })).toEqual({
      decision: 'not-held',
      by: undefined,
      cdn: undefined,
    });
    expect(ctx.edge.purges).toHaveLength(2);
  });
});
