import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { encodeIntent } from '../../../../lambda/core/page/intent.js';
import type { CdnPurge } from '../../../../lambda/core/page/ports.js';
import type { RenderRequest } from '../../../../lambda/core/regenerate/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import {
  HELD_PAGES_LISTED,
  revalidate,
  type RevalidationDeps,
} from '../../../../lambda/core/revalidate/revalidation.js';
import type { Revalidation } from '../../../../lambda/core/revalidate/model.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';
import { message } from '../../../helpers/worker-harness.js';

/** Pages that say when they were rendered and carry the tags `tagsOf` gives their path. */
function setup(tagsOf: (path: string) => string[] = () => ['post:1'], page?: PageFunction) {
  const counter = countingRenderer(
    page ??
      ((request, call) => ({
        ...htmlPage(`<p>${request.cacheKey.key} #${call}</p>`, { revalidateSeconds: 60 }),
        tags: tagsOf(request.cacheKey.path),
      })),
  );
  const service = memoryService({ renderer: counter.renderer });
  const purges: string[][] = [];
  const cdn = {
    invalidateTags: (tags: readonly string[]): Promise<CdnPurge> => {
      purges.push([...tags]);
      return Promise.resolve({ status: 'submitted', invalidationIds: [`I${purges.length}`] });
    },
  };
  const deps: RevalidationDeps = {
    marks: service.marks,
    tagIndex: service.tagIndex,
    queue: service.queue,
    cdn,
    clock: service.clock,
    deployId: 'd1',
  };
  const get = (path: string, tenant?: string) =>
    servePage(
      { ...service.originDeps, ...(tenant ? { tenancy: { header: 'x-tenant' } } : {}) },
      { method: 'GET', rawPath: path, rawQueryString: '', tenant, ifNoneMatch: undefined },
    );
  const text = (body: Uint8Array | undefined) => new TextDecoder().decode(body);
  let effects = 0;
  const request = (r: Partial<Revalidation>): Revalidation => ({
    tenant: undefined,
    keys: [],
    tags: [],
    mode: 'stale',
    regenerate: false,
    effectId: `rv_${++effects}`,
    ...r,
  });
  /** Runs every queued intent through the worker. */
  const work = async () => {
    for (const queued of service.queue.drain()) {
      await processMessage(
        service.workerDeps,
        message(`m-${Math.random()}`, encodeIntent(queued.intent)),
      );
    }
  };
  return { ...service, counter, deps, purges, get, text, request, work };
}

describe('revalidate (unit, in-memory ports)', () => {
  it('a path revalidation clears the page hit-for-pass mark; a revalidation of another page does not', async () => {
    const ctx = setup();
    const now = ctx.clock.seconds;
    const markPage = async (path: string) => {
      const { pk } = ctx.keyFor(path);
      const lease = await ctx.cacheTable.acquireLease({ pk, now, durationSeconds: 30 });
      const mark = {
        pk,
        until: now + 300,
        reason: 'uncacheable',
        markedAt: now,
        cacheKey: path,
        ttl: now + 3_900,
      };
      await ctx.cacheTable.markPass({ lease, mark, now });
      return pk;
    };
    const [named, other] = [await markPage('/form'), await markPage('/account')];
    await revalidate(ctx.deps, ctx.request({ keys: [ctx.keyFor('/form')] }));
    expect((await ctx.cacheTable.readPage(named)).pass).toBeUndefined();
    expect((await ctx.cacheTable.readPage(other)).pass).toMatchObject({ until: now + 300 });
  });

  it('stale: a fresh page is served STALE at once, one regeneration is queued, then it is fresh', async () => {
    const ctx = setup();
    const first = await ctx.get('/blog/a');
    expect((await ctx.get('/blog/a')).cacheStatus).toBe('HIT');
    const effect = await revalidate(ctx.deps, ctx.request({ keys: [ctx.keyFor('/blog/a')] }));
    expect(effect).toMatchObject({ pages: 1, regenerations: 0 });
    const stale = await ctx.get('/blog/a');
    expect(stale.cacheStatus).toBe('STALE');
    expect(ctx.text(stale.body)).toBe(ctx.text(first.body));
    expect(ctx.queue.messages).toHaveLength(1);
    await ctx.work();
    const after = await ctx.get('/blog/a');
    expect(after.cacheStatus).toBe('HIT');
    expect(ctx.text(after.body)).toContain('#2');
  });

  it('expire: the old body is never served again; the next request renders it like a first visit', async () => {
    const ctx = setup();
    await ctx.get('/blog/a');
    await revalidate(ctx.deps, ctx.request({ keys: [ctx.keyFor('/blog/a')], mode: 'expire' }));
    const next = await ctx.get('/blog/a');
    expect(next.cacheStatus).toBe('MISS');
    expect(ctx.text(next.body)).toContain('#2');
  });

  it('regenerate: queues an explicit regeneration now, even for a page backing off', async () => {
    const ctx = setup();
    await ctx.get('/blog/a');
    const meta = await ctx.cacheTable.getMeta(ctx.keyFor('/blog/a').pk);
    await ctx.cacheTable.recordFailure({
      pk: meta?.pk ?? '',
      observedGeneratedAt: meta?.generatedAt ?? 0,
      previousCount: 0,
      record: { count: 3, lastFailedAt: 0, nextAttemptAt: Number.MAX_SAFE_INTEGER, error: 'x' },
    });
    const effect = await revalidate(
      ctx.deps,
      ctx.request({ keys: [ctx.keyFor('/blog/a')], regenerate: true }),
    );
    expect(effect.regenerations).toBe(1);
    expect(ctx.queue.messages[0]?.intent).not.toHaveProperty('observedGeneratedAt');
    await ctx.work();
    expect((await ctx.get('/blog/a')).cacheStatus).toBe('HIT');
    expect(ctx.counter.calls).toBe(2);
  });

  it('regenerate: queues in batches of ten, one call per ten pages (negative control: one per page)', async () => {
    const ctx = setup(() => ['section:all']);
    const paths = Array.from({ length: 25 }, (_, i) => `/p/${i}`);
    for (const path of paths) await ctx.get(path);
    const before = ctx.queue.calls;
    const effect = await revalidate(
      ctx.deps,
      ctx.request({ tags: ['section:all'], regenerate: true }),
    );
    expect(effect).toMatchObject({ pages: 25, regenerations: 25 });
    expect(ctx.queue.calls - before).toBe(3);
    expect(new Set(ctx.queue.messages.map((m) => m.intent.path))).toEqual(new Set(paths));
  });

  it('held pages: counted and listed, not queued for a regeneration the worker would refuse', async () => {
    const ctx = setup(() => ['section:all']);
    for (const path of ['/h/a', '/h/b', '/h/c']) await ctx.get(path);
    const hold = (path: string) => {
      const pk = ctx.keyFor(path).pk;
      const meta = ctx.state.metas.get(pk);
      if (meta !== undefined)
        ctx.state.metas.set(pk, { ...meta, holdUntil: ctx.clock.seconds + 600 });
    };
    hold('/h/a');
    hold('/h/b');
    const effect = await revalidate(
      ctx.deps,
      ctx.request({ tags: ['section:all'], regenerate: true }),
    );
    expect(effect).toMatchObject({ pages: 3, regenerations: 1 });
    expect(effect.held.count).toBe(2);
    expect(effect.held.pages.map((page) => page.key).sort()).toEqual(['/h/a', '/h/b']);
    expect(effect.held.pages[0]?.holdUntil).toBe(ctx.clock.seconds + 600);
    expect(ctx.queue.messages.map((m) => m.intent.path)).toEqual(['/h/c']);
    // The exception the receipt reports: a held page stays a HIT until its hold ends.
    expect((await ctx.get('/h/a')).cacheStatus).toBe('HIT');
    ctx.clock.advance(601); // the hold ends; the mark applies from then on
    expect((await ctx.get('/h/a')).cacheStatus).toBe('STALE');
  });

  it('held pages: the list is capped, the count is not; an expire takes the hold with META', async () => {
    const ctx = setup(() => ['section:all']);
    const paths = Array.from({ length: HELD_PAGES_LISTED + 5 }, (_, i) => `/held/${i}`);
    for (const path of paths) await ctx.get(path);
    for (const [pk, meta] of ctx.state.metas)
      ctx.state.metas.set(pk, { ...meta, holdUntil: ctx.clock.seconds + 60 });
    const stale = await revalidate(ctx.deps, ctx.request({ tags: ['section:all'] }));
    expect(stale.held.count).toBe(paths.length);
    expect(stale.held.pages).toHaveLength(HELD_PAGES_LISTED);
    const expire = await revalidate(
      ctx.deps,
      ctx.request({ tags: ['section:all'], mode: 'expire' }),
    );
    expect(expire.held).toEqual({ count: 0, pages: [] });
  });

  it('tags: every page carrying the tag is marked, pages without it are not', async () => {
    const ctx = setup((path) => (path.startsWith('/blog') ? ['section:blog'] : ['section:docs']));
    for (const path of ['/blog/a', '/blog/b', '/blog/c', '/docs/a']) await ctx.get(path);
    const effect = await revalidate(ctx.deps, ctx.request({ tags: ['section:blog'] }));
    expect(effect.pages).toBe(3); // the fake index pages by two: pagination is followed
    for (const path of ['/blog/a', '/blog/b', '/blog/c']) {
      expect((await ctx.get(path)).cacheStatus).toBe('STALE');
    }
    expect((await ctx.get('/docs/a')).cacheStatus).toBe('HIT');
  });

  it('tenant isolation: a tag revalidation in tenant A never touches tenant B', async () => {
    const ctx = setup();
    await ctx.get('/home', 'acme');
    await ctx.get('/home', 'globex');
    await revalidate(ctx.deps, ctx.request({ tenant: 'acme', tags: ['post:1'] }));
    expect((await ctx.get('/home', 'acme')).cacheStatus).toBe('STALE');
    expect((await ctx.get('/home', 'globex')).cacheStatus).toBe('HIT');
    expect(ctx.purges.at(-1)).toEqual(['acme/post:1']);
  });

  it('purges the CDN by tenant-scoped tag and by the key tag of each path', async () => {
    const ctx = setup();
    const key = ctx.keyFor('/blog/a');
    const effect = await revalidate(ctx.deps, ctx.request({ keys: [key], tags: ['Post:1'] }));
    expect(ctx.purges.at(-1)).toEqual(['_/post:1', `_/key:${key.hash.slice(0, 40)}`]);
    expect(effect.cdn).toEqual({ status: 'submitted', invalidationIds: ['I1'] });
  });

  it('every page lists its CDN tags in the cache-tag header', async () => {
    const ctx = setup();
    const reply = await ctx.get('/blog/a');
    expect(reply.headers['x-isr-cache-tags']).toBe(
      `_/post:1,_/key:${ctx.keyFor('/blog/a').hash.slice(0, 40)}`,
    );
  });

  describe('a render that started before the revalidation', () => {
    /** A page whose second render pauses until `release()`, so a revalidation lands mid-render. */
    function raced(tagsOf?: (path: string, call: number) => string[]) {
      let release: () => void = () => undefined;
      let rendering: () => void = () => undefined;
      const started = new Promise<void>((resolve) => (rendering = resolve));
      const paused = new Promise<void>((resolve) => (release = resolve));
      const ctx = setup(undefined, async (request: RenderRequest, call) => {
        if (call === 2) {
          rendering();
          await paused;
        }
        return {
          ...htmlPage(`<p>render #${call}</p>`, { revalidateSeconds: 60 }),
          tags: tagsOf?.(request.cacheKey.path, call) ?? ['post:1'],
        };
      });
      return { ctx, started, release: () => release() };
    }

    it('publishes nothing older than the revalidation, in the same second: it renders again', async () => {
      const { ctx, started, release } = raced();
      await ctx.get('/blog/a');
      ctx.clock.advance(61);
      const key = ctx.keyFor('/blog/a');
      const inFlight = regenerate(ctx.regenerateDeps, { cacheKey: key, need: { kind: 'intent' } });
      await started;
      await revalidate(ctx.deps, ctx.request({ keys: [key] })); // same second as the render start
      release();
      expect((await inFlight).decision).toBe('new');
      expect(ctx.counter.calls).toBe(3); // the racing render, then one after the revalidation
      const page = await ctx.get('/blog/a');
      expect(page.cacheStatus).toBe('HIT');
      expect(ctx.text(page.body)).toBe('<p>render #3</p>');
    });

    it('gaining a tag revalidated during its render, it renders again too', async () => {
      const { ctx, started, release } = raced((_path, call) => (call >= 2 ? ['post:9'] : []));
      await ctx.get('/blog/a');
      ctx.clock.advance(61);
      const key = ctx.keyFor('/blog/a');
      const inFlight = regenerate(ctx.regenerateDeps, { cacheKey: key, need: { kind: 'intent' } });
      await started;
      // The page is not yet indexed under post:9, so the revalidation finds nothing to mark.
      expect((await revalidate(ctx.deps, ctx.request({ tags: ['post:9'] }))).pages).toBe(0);
      release();
      expect((await inFlight).decision).toBe('new');
      expect(ctx.counter.calls).toBe(3);
      expect(ctx.text((await ctx.get('/blog/a')).body)).toBe('<p>render #3</p>');
    });
  });
});
