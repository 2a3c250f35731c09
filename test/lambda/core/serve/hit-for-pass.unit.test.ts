import { describe, expect, it } from '@jest/globals';
import { InProcessPassThrough } from '../../../../lambda/adapters/pass-through/in-process.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import type { CacheTable } from '../../../../lambda/core/page/ports.js';
import type { RenderResult } from '../../../../lambda/core/page/model.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { withOverrides } from '../../../helpers/overrides.js';
import { countingRenderer, gate } from '../../../helpers/renderers.js';

const privatePage = (): RenderResult => ({
  ...htmlPage('<p>anonymous</p>'),
  headers: { 'cache-control': 'private, no-store' },
});

/** Every CacheTable call by name, reads and writes. */
function counted(table: CacheTable) {
  const calls: string[] = [];
  const names = [
    'getMeta',
    'readPage',
    'markPass',
    'acquireLease',
    'refreshLease',
    'releaseLease',
    'publishGeneration',
  ] as const;
  const overrides: Partial<CacheTable> = {};
  for (const name of names) {
    const original = (table[name] as (...args: unknown[]) => unknown).bind(table);
    (overrides as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls.push(name);
      return original(...args);
    };
  }
  return { table: withOverrides(table, overrides), calls };
}

function setup(options: {
  hitForPassSeconds: number;
  page?: () => RenderResult | Promise<RenderResult>;
}) {
  let uncacheable = true;
  const counter = countingRenderer(
    options.page ??
      (() => (uncacheable ? privatePage() : htmlPage('<p>public</p>', { revalidateSeconds: 10 }))),
  );
  const passThrough = new InProcessPassThrough(() => ({ status: 200, body: '<p>yours</p>' }));
  const service = memoryService({
    renderer: counter.renderer,
    passThrough,
    hitForPassSeconds: options.hitForPassSeconds,
  });
  const recorder = counted(service.cacheTable);
  const deps = { ...service.originDeps, cacheTable: recorder.table };
  const get = () =>
    servePage(deps, {
      method: 'GET',
      rawPath: '/p',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    });
  return {
    ...service,
    counter,
    passThrough,
    calls: recorder.calls,
    get,
    becomeCacheable: () => (uncacheable = false),
    becomeUncacheable: () => (uncacheable = true),
  };
}

describe('hit-for-pass (META#PASS)', () => {
  it('remembers the key: later requests pass at once, with one read and no write or render', async () => {
    const ctx = setup({ hitForPassSeconds: 300 });
    const first = await ctx.get();
    expect(first.headers['cache-status']).toBe('facetheory-isr; fwd=bypass; detail=uncacheable');
    expect(ctx.state.passes.get(ctx.keyFor('/p').pk)).toMatchObject({ reason: 'uncacheable' });
    expect(ctx.state.locks.size).toBe(0);
    ctx.calls.length = 0;
    const second = await ctx.get();
    expect(second.status).toBe(200);
    expect(new TextDecoder().decode(second.body)).toBe('<p>yours</p>');
    expect(second.headers['cache-status']).toBe('facetheory-isr; fwd=bypass; detail=hit-for-pass');
    expect(ctx.calls).toEqual(['readPage']);
    expect(ctx.counter.calls).toBe(1);
  });

  it('negative control: without the mark, every request renders again and takes the lease', async () => {
    const ctx = setup({ hitForPassSeconds: 0 });
    await ctx.get();
    ctx.calls.length = 0;
    await ctx.get();
    expect(ctx.counter.calls).toBe(2);
    expect(ctx.calls).toContain('acquireLease');
  });

  it('lasts hitForPassSeconds; then the key renders again, and is cached if it became cacheable', async () => {
    const ctx = setup({ hitForPassSeconds: 300 });
    await ctx.get();
    ctx.becomeCacheable();
    ctx.clock.advance(299);
    expect((await ctx.get()).headers['x-isr-cache']).toBe('PASS');
    ctx.clock.advance(1);
    expect((await ctx.get()).headers['x-isr-cache']).toBe('MISS');
    expect((await ctx.get()).headers['x-isr-cache']).toBe('HIT');
  });

  it('deletes META: a page that became uncacheable never comes back STALE', async () => {
    const ctx = setup({ hitForPassSeconds: 300 });
    ctx.becomeCacheable();
    await ctx.get();
    ctx.becomeUncacheable();
    ctx.clock.advance(11); // stale: served STALE once while the regeneration is queued
    expect((await ctx.get()).headers['x-isr-cache']).toBe('STALE');
    // The queued regeneration's render, as the worker does it, finds the page uncacheable.
    const { regenerate } = await import('../../../../lambda/core/regenerate/regenerate.js');
    await expect(
      regenerate(ctx.regenerateDeps, { cacheKey: ctx.keyFor('/p'), need: { kind: 'intent' } }),
    ).rejects.toMatchObject({ reason: 'uncacheable' });
    expect(ctx.state.metas.size).toBe(0);
    expect(await ctx.cacheTable.getMeta(ctx.keyFor('/p').pk)).toBeUndefined(); // FaceTheory's read
    expect((await ctx.get()).headers['cache-status']).toBe(
      'facetheory-isr; fwd=bypass; detail=hit-for-pass',
    );
  });

  it.each([[300]])(
    'with hitForPassSeconds %d, a viewer waiting on that MISS passes once the mark shows, not 503',
    async (seconds) => {
      const rendering = gate();
      const started = gate();
      const ctx = setup({
        hitForPassSeconds: seconds,
        page: async () => {
          started.open();
          await rendering.wait();
          return privatePage();
        },
      });
      const first = ctx.get();
      await started.wait();
      const waiting = ctx.get(); // the lease is held: it polls for the publish
      await ctx.clock.whenSleeping(2); // the render's timeout and the waiter's poll
      rendering.open();
      expect((await first).headers['x-isr-cache']).toBe('PASS');
      ctx.clock.advanceToNextSleeper();
      const waited = await waiting;
      expect(waited.status).toBe(200);
      expect(waited.headers['cache-status']).toBe(
        'facetheory-isr; fwd=bypass; detail=hit-for-pass',
      );
      expect(ctx.counter.calls).toBe(1);
    },
  );
});
