/**
 * An unchanged render (`core/regenerate/unchanged.ts`): a render equal to the live generation
 * moves its freshness on and writes no body, no version and no new META, under the same lease
 * and revalidation rules as a publish. Negative controls: a one-byte change publishes.
 */
import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import type { RenderResult } from '../../../../lambda/core/page/model.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import type { RegenerateDeps } from '../../../../lambda/core/regenerate/deps.js';
import { admitPage, type AdmittedPage } from '../../../../lambda/core/regenerate/render-policy.js';
import { pageDigest } from '../../../../lambda/core/regenerate/unchanged.js';
import { generationHeaders } from '../../../../lambda/core/serve/responses.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { withOverrides } from '../../../helpers/overrides.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';

const admitted = (page: RenderResult): AdmittedPage =>
  admitPage(page, { maxBodyBytes: 1 << 20, defaultRevalidateSeconds: 60 });
const digestOf = (body: string, extra: Partial<RenderResult> = {}) =>
  pageDigest(admitted({ ...htmlPage(body), ...extra }));

describe('pageDigest', () => {
  it('is the same for the same page, tags in any order, whatever its freshness', () => {
    const a = digestOf('<p>a</p>', { tags: ['x', 'y'], revalidateSeconds: 10 });
    expect(digestOf('<p>a</p>', { tags: ['y', 'x'], revalidateSeconds: 99 })).toBe(a);
    expect(digestOf('<p>a</p>', { headers: { 'x-isr-not-kept': '1' } })).toBe(digestOf('<p>a</p>'));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('differs for one byte of body, a status, a kept header, a tag, a location', () => {
    const base = digestOf('<p>a</p>');
    const others = [
      digestOf('<p>b</p>'),
      digestOf('<p>a</p> '),
      digestOf('<p>a</p>', { status: 404 }),
      digestOf('<p>a</p>', { headers: { 'content-security-policy': "default-src 'self'" } }),
      digestOf('<p>a</p>', { tags: ['x'] }),
      digestOf('<p>a</p>', { status: 301, location: '/b' }),
      digestOf('<p>a</p>', { status: 301, location: '/c' }),
    ];
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
  });

  it('frames each field: bytes moved from one field to the next change the digest', () => {
    const page = admitted(htmlPage('ab'));
    const moved = { ...page, contentType: `${page.contentType}a`, body: Buffer.from('b') };
    expect(pageDigest(moved)).not.toBe(pageDigest(page));
  });
});

/** One page, its fakes, and `run()` regenerating it as an intent after it went stale. */
function setup(page: PageFunction, overrides: Partial<RegenerateDeps> = {}) {
  const counter = countingRenderer(page);
  const service = memoryService({ renderer: counter.renderer });
  const deps: RegenerateDeps = { ...service.regenerateDeps, ...overrides };
  const cacheKey = service.keyFor('/page');
  const run = (d: RegenerateDeps = deps) =>
    regenerate(d, { cacheKey, need: { kind: 'intent' }, owner: 'unit' });
  const meta = () => service.cacheTable.getMeta(cacheKey.pk);
  const objects = () => [...service.bodies.objects.keys()];
  const versions = () => service.state.versions.size;
  return { ...service, counter, deps, cacheKey, run, meta, objects, versions };
}

describe('regenerate: an unchanged render', () => {
  it('moves META’s freshness on, and writes no body, version or other attribute', async () => {
    const ctx = setup(() => htmlPage('<p>same</p>', { revalidateSeconds: 60 }));
    expect((await ctx.run()).decision).toBe('new');
    const first = await ctx.meta();
    ctx.clock.advance(61);
    const outcome = await ctx.run();
    expect(outcome.decision).toBe('unchanged');
    const refreshed = await ctx.meta();
    expect(refreshed).toEqual({
      ...first,
      generatedAt: ctx.clock.seconds,
      ttl: ctx.clock.seconds + 60 + 7 * 86_400,
      modifiedAt: first?.generatedAt,
      unchangedRenders: 1,
    });
    expect(ctx.objects()).toHaveLength(1);
    expect(ctx.versions()).toBe(1);
    expect(ctx.state.locks.has(ctx.cacheKey.pk)).toBe(false);
    ctx.clock.advance(61);
    expect((await ctx.run()).decision).toBe('unchanged');
    expect(await ctx.meta()).toMatchObject({ unchangedRenders: 2, modifiedAt: first?.generatedAt });
  });

  it('a one-byte change publishes a new generation (negative control)', async () => {
    const ctx = setup((_request, call) => htmlPage(call === 1 ? '<p>same</p>' : '<p>same!</p>'));
    await ctx.run();
    const first = await ctx.meta();
    ctx.clock.advance(61);
    expect((await ctx.run()).decision).toBe('new');
    const second = await ctx.meta();
    expect(second?.s3Key).not.toBe(first?.s3Key);
    expect(second?.digest).not.toBe(first?.digest);
    expect(second?.unchangedRenders).toBeUndefined();
    expect(ctx.objects()).toHaveLength(2);
    expect(ctx.versions()).toBe(2);
  });

  it('keeps Last-Modified at the content’s first publish, so If-Modified-Since still matches', async () => {
    const ctx = setup(() => htmlPage('<p>same</p>'));
    await ctx.run();
    const first = await ctx.meta();
    ctx.clock.advance(61);
    await ctx.run();
    const caching = {
      staleSharedMaxAge: 1,
      staleWhileRevalidateSeconds: 1,
      staleIfErrorSeconds: 1,
    };
    const headers = generationHeaders((await ctx.meta())!, 'HIT', ctx.clock.seconds, caching);
    expect(headers['last-modified']).toBe(new Date((first?.generatedAt ?? 0) * 1000).toUTCString());
    expect(headers.etag).toBe(first?.etag);
  });

  it('publishes over a META another writer made without a digest', async () => {
    const ctx = setup(() => htmlPage('<p>same</p>'));
    await ctx.run();
    const first = await ctx.meta();
    ctx.state.metas.set(ctx.cacheKey.pk, { ...first!, digest: undefined });
    ctx.clock.advance(61);
    expect((await ctx.run()).decision).toBe('new');
  });

  it('renders again after a revalidation marked META during the render, then refreshes', async () => {
    const ctx = setup(() => htmlPage('<p>same</p>'));
    await ctx.run();
    ctx.clock.advance(61);
    let marked = false;
    const marking = withOverrides(ctx.cacheTable, {
      refreshGeneration: async (input) => {
        if (!marked) {
          marked = true;
          await ctx.marks.markStale(ctx.cacheKey.pk, { effectId: 'rv_1', now: ctx.clock.seconds });
        }
        return ctx.cacheTable.refreshGeneration(input);
      },
    });
    expect((await ctx.run({ ...ctx.deps, cacheTable: marking })).decision).toBe('unchanged');
    expect(ctx.counter.calls).toBe(3);
    const meta = await ctx.meta();
    expect(meta?.revalidatedBy).toBeUndefined();
    expect(meta?.revalidateSeconds).toBe(60);
  });

  it('is superseded by a generation published since its render read META; writes nothing', async () => {
    const ctx = setup(() => htmlPage('<p>same</p>'));
    await ctx.run();
    ctx.clock.advance(61);
    const before = await ctx.meta();
    const published = { ...before!, s3Key: 'pages/_/other/body', generatedAt: ctx.clock.seconds };
    const racing = withOverrides(ctx.cacheTable, {
      refreshGeneration: (input) => {
        ctx.state.metas.set(ctx.cacheKey.pk, published);
        return ctx.cacheTable.refreshGeneration(input);
      },
    });
    const outcome = await ctx.run({ ...ctx.deps, cacheTable: racing });
    expect(outcome).toMatchObject({ decision: 'superseded' });
    expect(await ctx.meta()).toEqual(published);
    expect(ctx.state.locks.has(ctx.cacheKey.pk)).toBe(false);
  });

  it('writes nothing once its lease ran out on its own clock during the render', async () => {
    const ctx = setup(
      (_request, call) => {
        if (call === 2) ctx.clock.advance(31);
        return htmlPage('<p>same</p>');
      },
      { renderTimeoutMs: 60_000 },
    );
    await ctx.run();
    ctx.clock.advance(61);
    const before = await ctx.meta();
    // Its refreshes fail (throttled, say): the lease runs out while the render goes on.
    const unrefreshed = withOverrides(ctx.cacheTable, {
      refreshLease: () => Promise.reject(new Error('throttled')),
    });
    expect((await ctx.run({ ...ctx.deps, cacheTable: unrefreshed })).decision).toBe('lease-lost');
    expect(await ctx.meta()).toEqual(before);
  });

  it('never answers a viewer waiting on a broken body with the broken generation', async () => {
    const ctx = setup(() => htmlPage('<p>same</p>'));
    await ctx.run();
    const broken = await ctx.meta();
    const outcome = await regenerate(ctx.deps, {
      cacheKey: ctx.cacheKey,
      need: { kind: 'page', brokenBodyKey: broken?.s3Key },
    });
    expect(outcome.decision).toBe('new');
    expect((await ctx.meta())?.s3Key).not.toBe(broken?.s3Key);
  });
});
