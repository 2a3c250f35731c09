import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { RenderAdmission } from '../../../../lambda/core/regenerate/admission.js';
import { compilePathPatterns } from '../../../../lambda/core/path-patterns.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import type { OriginDeps, PageRequest } from '../../../../lambda/core/serve/request.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { withOverrides } from '../../../helpers/overrides.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';

function setup(
  page: PageFunction = (r, call) =>
    htmlPage(`<p>${r.cacheKey.key} #${call}</p>`, { revalidateSeconds: 10 }),
) {
  const counter = countingRenderer(page);
  const service = memoryService({ renderer: counter.renderer });
  const get = (
    rawPath: string,
    extra: Partial<PageRequest> = {},
    deps: OriginDeps = service.originDeps,
  ) =>
    servePage(deps, {
      method: 'GET',
      rawPath,
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
      ...extra,
    });
  const text = (body: Uint8Array | undefined) =>
    body === undefined ? undefined : new TextDecoder().decode(body);
  return { ...service, counter, get, text };
}

describe('servePage (unit, in-memory ports)', () => {
  it('reads META strongly consistent, so a page a revalidation marked is never read as fresh', async () => {
    const ctx = setup();
    await ctx.get('/a');
    const reads: string[] = [];
    const recording = withOverrides(ctx.cacheTable, {
      getMeta: (pk: string, options?: { consistent?: boolean }) => {
        reads.push(`getMeta ${JSON.stringify(options)}`);
        return ctx.cacheTable.getMeta(pk, options);
      },
      readPage: (pk: string) => {
        reads.push('readPage'); // strongly consistent by contract (one Query, ConsistentRead)
        return ctx.cacheTable.readPage(pk);
      },
    });
    expect(await ctx.get('/a', {}, { ...ctx.originDeps, cacheTable: recording })).toMatchObject({
      cacheStatus: 'HIT',
    });
    expect(reads).toEqual(['readPage']);
  });

  it('refuses methods other than GET and HEAD with 405 and Allow', async () => {
    const reply = await setup().get('/a', { method: 'POST' });
    expect(reply).toMatchObject({ status: 405, headers: { allow: 'GET, HEAD' } });
  });

  it('refuses a request that names no cache entry with 400 and the reason', async () => {
    const ctx = setup();
    expect(await ctx.get('/a/../b')).toMatchObject({ status: 400, decision: 'traversal' });
    const multi = { ...ctx.originDeps, tenancy: { header: 'x-tenant' } };
    expect(await ctx.get('/a', {}, multi)).toMatchObject({
      status: 400,
      decision: 'missing-tenant',
    });
    expect(ctx.counter.calls).toBe(0);
  });

  it('answers a path outside the render allow-list with 404, without a read or a render', async () => {
    const ctx = setup();
    const keyPolicy = { ...ctx.originDeps.keyPolicy, renderable: compilePathPatterns(['/blog/*']) };
    const noReads = withOverrides(ctx.cacheTable, {
      getMeta: () => Promise.reject(new Error('no read expected')),
    });
    const deps = { ...ctx.originDeps, keyPolicy, cacheTable: noReads };
    const reply = await ctx.get('/random-8f3a', {}, deps);
    expect(reply).toMatchObject({ status: 404, decision: 'path-not-renderable' });
    expect(reply.headers['cache-control']).toBe('public, max-age=0, s-maxage=60');
    expect((await ctx.get('/blog/post', {}, { ...ctx.originDeps, keyPolicy })).status).toBe(200);
    expect(ctx.counter.calls).toBe(1);
  });

  it('renders a miss in the request, then serves it as a HIT with the freshness left', async () => {
    const ctx = setup();
    const miss = await ctx.get('/a');
    expect(miss).toMatchObject({ status: 200, decision: 'new', cacheStatus: 'MISS' });
    expect(ctx.text(miss.body)).toBe('<p>/a #1</p>');
    ctx.clock.advance(4);
    const hit = await ctx.get('/a');
    expect(hit).toMatchObject({ status: 200, decision: 'fresh', cacheStatus: 'HIT' });
    expect(hit.headers['cache-control']).toContain('s-maxage=6,');
    expect(ctx.text(hit.body)).toBe('<p>/a #1</p>');
    expect(ctx.counter.calls).toBe(1);
  });

  it('answers If-None-Match and HEAD from META alone, with no body read', async () => {
    const ctx = setup();
    const first = await ctx.get('/a');
    const noBodies = {
      ...ctx.originDeps,
      bodies: withOverrides(ctx.bodies, {
        getBody: () => Promise.reject(new Error('no S3 call expected')),
      }),
    };
    const notModified = await ctx.get('/a', { ifNoneMatch: first.headers.etag }, noBodies);
    expect(notModified).toMatchObject({ status: 304, decision: 'not-modified', body: undefined });
    const head = await ctx.get('/a', { method: 'HEAD' }, noBodies);
    expect(head).toMatchObject({ status: 200, body: undefined });
  });

  it('serves a stale page at once and queues one intent naming the generation it saw', async () => {
    const ctx = setup();
    await ctx.get('/a');
    const meta = await ctx.cacheTable.getMeta(ctx.keyFor('/a').pk);
    ctx.clock.advance(11);
    const replies = await Promise.all(Array.from({ length: 20 }, () => ctx.get('/a')));
    expect(replies.every((reply) => reply.status === 200 && reply.cacheStatus === 'STALE')).toBe(
      true,
    );
    expect(replies[0]?.headers['cache-control']).toContain('s-maxage=2,');
    const queued = ctx.queue.drain();
    expect(queued).toHaveLength(1);
    expect(queued[0]?.intent).toMatchObject({ path: '/a', observedGeneratedAt: meta?.generatedAt });
    expect(ctx.counter.calls).toBe(1);
  });

  it('still serves the stale page when the enqueue fails', async () => {
    const ctx = setup();
    await ctx.get('/a');
    ctx.clock.advance(11);
    const broken = {
      ...ctx.originDeps,
      queue: { enqueue: () => Promise.reject(new Error('SQS down')) },
    };
    const reply = await ctx.get('/a', {}, broken);
    expect(reply).toMatchObject({
      status: 200,
      cacheStatus: 'STALE',
      detail: { enqueue: 'enqueue-failed' },
    });
  });

  it('renders again when META points at a missing body', async () => {
    const ctx = setup();
    await ctx.get('/a');
    const before = await ctx.cacheTable.getMeta(ctx.keyFor('/a').pk);
    await ctx.bodies.deleteBody(before?.s3Key ?? '');
    const reply = await ctx.get('/a');
    expect(reply).toMatchObject({
      status: 200,
      cacheStatus: 'MISS',
      detail: { bodyMissing: before?.s3Key },
    });
    expect(ctx.counter.calls).toBe(2);
  });

  describe('a miss while another holder renders', () => {
    it('waits for its publish and serves that page', async () => {
      const ctx = setup();
      const key = ctx.keyFor('/a');
      const lease = await ctx.cacheTable.acquireLease({
        pk: key.pk,
        now: ctx.clock.seconds,
        durationSeconds: 30,
      });
      const reply = ctx.get('/a');
      await ctx.clock.whenSleeping(); // the miss found META absent and waits, polling
      const waitedFrom = ctx.clock.now();
      await ctx.bodies.putBody({
        s3Key: 'pages/_/x/other',
        body: new TextEncoder().encode('theirs'),
        contentType: 'text/html',
      });
      await ctx.cacheTable.publishGeneration({
        observed: undefined,
        lease,
        now: ctx.clock.seconds,
        meta: {
          pk: key.pk,
          s3Key: 'pages/_/x/other',
          generatedAt: ctx.clock.seconds,
          revalidateSeconds: 10,
        },
      });
      ctx.clock.advanceToNextSleeper(); // its next poll finds the publish
      expect(ctx.text((await reply).body)).toBe('theirs');
      expect(ctx.counter.calls).toBe(0);
      expect(ctx.clock.now() - waitedFrom).toBe(25); // the first poll interval, no more
    });

    it('answers 503 with Retry-After when the holder does not publish in time', async () => {
      const ctx = setup();
      await ctx.cacheTable.acquireLease({
        pk: ctx.keyFor('/a').pk,
        now: ctx.clock.seconds,
        durationSeconds: 30,
      });
      const asked = ctx.clock.now();
      const reply = await ctx.clock.runUntil(ctx.get('/a'));
      // It waited exactly the configured time on the clock (25 + 50 + 100 + 25 ms), then gave up.
      expect(ctx.clock.now() - asked).toBe(ctx.originDeps.missWaitMs);
      expect(ctx.clock.slept).toEqual([25, 50, 100, 25]);
      expect(reply).toMatchObject({
        status: 503,
        decision: 'lease-held',
        headers: { 'retry-after': '2' },
      });
    });
  });

  describe('failures are answered by their kind', () => {
    it('a refused page is a 502 naming the refusal, and nothing is cached', async () => {
      const ctx = setup(() => ({
        ...htmlPage('', { status: 302 }),
        location: '/login',
        headers: { 'cache-control': 'private, no-store' },
      }));
      const reply = await ctx.get('/account');
      expect(reply.status).toBe(502);
      expect(JSON.parse(ctx.text(reply.body) ?? '{}')).toMatchObject({
        error: 'refused:uncacheable',
      });
      expect(reply.headers['retry-after']).toBeUndefined();
      expect(await ctx.cacheTable.getMeta(ctx.keyFor('/account').pk)).toBeUndefined();
    });

    it('a render that may succeed later is a 503 with Retry-After', async () => {
      const ctx = setup(() => htmlPage('down', { status: 500 }));
      const reply = await ctx.get('/a');
      expect(reply).toMatchObject({
        status: 503,
        decision: 'render-failed',
        headers: { 'retry-after': '2' },
      });
    });

    it('a failing store is a 503 that says nothing of the cause', async () => {
      const ctx = setup();
      const failing = {
        ...ctx.originDeps,
        cacheTable: withOverrides(ctx.cacheTable, {
          getMeta: () =>
            Promise.reject(new Error('ProvisionedThroughputExceededException at line 42')),
        }),
      };
      const reply = await ctx.get('/a', {}, failing);
      expect(reply).toMatchObject({ status: 503, decision: 'unavailable' });
      expect(ctx.text(reply.body)).not.toContain('line 42');
    });
  });

  describe('the MISS admission cap', () => {
    async function full(fallbackPath?: string) {
      const ctx = setup();
      const admission = new RenderAdmission(ctx.cacheTable, { limit: 1 });
      if (fallbackPath !== undefined) await ctx.get(fallbackPath); // rendered before the rush
      await admission.enter(ctx.clock.seconds, 30); // a render elsewhere holds the only slot
      const deps = { ...ctx.originDeps, admission, overloadFallbackPath: fallbackPath };
      return { ctx, deps };
    }

    it('answers 503 overloaded with Retry-After at once, without rendering or keeping the lease', async () => {
      const { ctx, deps } = await full();
      const reply = await ctx.get('/new', {}, deps);
      expect(reply).toMatchObject({
        status: 503,
        decision: 'overloaded',
        headers: { 'retry-after': '2' },
      });
      expect(ctx.counter.calls).toBe(0);
      expect(ctx.state.locks.has(ctx.keyFor('/new').pk)).toBe(false);
    });

    it('serves the configured fallback page instead, as a 503 nobody caches', async () => {
      const { ctx, deps } = await full('/busy');
      const reply = await ctx.get('/new', {}, deps);
      expect(reply).toMatchObject({ status: 503, decision: 'overloaded' });
      expect(reply.headers).toMatchObject({ 'cache-control': 'no-store', 'retry-after': '2' });
      expect(reply.headers.etag).toBeUndefined();
      expect(ctx.text(reply.body)).toBe('<p>/busy #1</p>');
    });

    it('frees the slot when the render ends, so the next MISS renders', async () => {
      const ctx = setup();
      const admission = new RenderAdmission(ctx.cacheTable, { limit: 1 });
      const deps = { ...ctx.originDeps, admission };
      expect((await ctx.get('/one', {}, deps)).status).toBe(200);
      expect((await ctx.get('/two', {}, deps)).status).toBe(200);
    });
  });

  describe('pages as the upstream meant them', () => {
    const secure: PageFunction = (r, call) => ({
      ...htmlPage(`<p>${r.cacheKey.key} #${call}</p>`, { revalidateSeconds: 10 }),
      headers: {
        'content-security-policy': "default-src 'self'",
        'content-language': 'en',
        connection: 'close',
      },
    });

    it('replays kept headers on MISS, HIT, STALE and HEAD, security ones on 304, never hop-by-hop', async () => {
      const ctx = setup(secure);
      const miss = await ctx.get('/a');
      const hit = await ctx.get('/a');
      const head = await ctx.get('/a', { method: 'HEAD' });
      const notModified = await ctx.get('/a', { ifNoneMatch: miss.headers.etag });
      ctx.clock.advance(11);
      const stale = await ctx.get('/a');
      for (const reply of [miss, hit, head, stale]) {
        expect(reply.headers).toMatchObject({
          'content-security-policy': "default-src 'self'",
          'content-language': 'en',
        });
        expect(reply.headers.connection).toBeUndefined();
      }
      expect(notModified.status).toBe(304);
      expect(notModified.headers['content-security-policy']).toBe("default-src 'self'");
      expect(notModified.headers['content-language']).toBeUndefined();
      expect(notModified.headers['content-type']).toBeUndefined();
    });

    it('says Content-Length on GET and HEAD, from META for HEAD', async () => {
      const ctx = setup();
      const miss = await ctx.get('/a');
      const length = String(miss.body?.byteLength);
      expect(miss.headers['content-length']).toBe(length);
      expect((await ctx.get('/a')).headers['content-length']).toBe(length);
      expect((await ctx.get('/a', { method: 'HEAD' })).headers['content-length']).toBe(length);
    });

    it('answers If-Modified-Since from META: 304 when not modified since, 200 otherwise', async () => {
      const ctx = setup();
      await ctx.get('/a');
      const generated = new Date(ctx.clock.now()).toUTCString();
      const earlier = new Date(ctx.clock.now() - 60_000).toUTCString();
      expect((await ctx.get('/a', { ifModifiedSince: generated })).status).toBe(304);
      expect((await ctx.get('/a', { ifModifiedSince: earlier })).status).toBe(200);
      expect((await ctx.get('/a', { ifModifiedSince: 'not a date' })).status).toBe(200);
      // If-None-Match wins when both are sent
      expect(
        (await ctx.get('/a', { ifModifiedSince: generated, ifNoneMatch: '"other"' })).status,
      ).toBe(200);
    });

    it('serves a row FaceTheory wrote (no status on META) with the status, type and CSP of its object', async () => {
      const ctx = setup();
      const key = ctx.keyFor('/ft');
      await ctx.bodies.putBody({
        s3Key: 'isr/ft-body',
        body: new TextEncoder().encode('gone'),
        contentType: 'application/octet-stream',
        metadata: {
          status: 404,
          contentType: 'text/html',
          contentSecurityPolicy: "default-src 'none'",
        },
      });
      const lease = await ctx.cacheTable.acquireLease({
        pk: key.pk,
        now: ctx.clock.seconds,
        durationSeconds: 30,
      });
      await ctx.cacheTable.publishGeneration({
        observed: undefined,
        lease,
        now: ctx.clock.seconds,
        meta: {
          pk: key.pk,
          s3Key: 'isr/ft-body',
          generatedAt: ctx.clock.seconds,
          revalidateSeconds: 60,
        },
      });
      for (const method of ['GET', 'HEAD']) {
        const reply = await ctx.get('/ft', { method });
        expect(reply.status).toBe(404);
        expect(reply.headers).toMatchObject({
          'content-type': 'text/html',
          'content-security-policy': "default-src 'none'",
          'content-length': '4',
        });
      }
      expect(ctx.counter.calls).toBe(0);
    });
  });

  describe('multi-tenant answers', () => {
    it('vary on the tenant header, and refuse a tenant that is not served', async () => {
      const ctx = setup();
      const deps = { ...ctx.originDeps, tenancy: { header: 'x-tenant', tenants: ['acme'] } };
      const served = await ctx.get('/a', { tenant: 'acme' }, deps);
      expect(served.headers.vary).toBe('x-tenant');
      expect((await ctx.get('/a', { tenant: 'acme' }, deps)).headers.vary).toBe('x-tenant');
      const unknown = await ctx.get('/a', { tenant: 'globex' }, deps);
      expect(unknown).toMatchObject({ status: 400, decision: 'unknown-tenant' });
      expect(ctx.counter.calls).toBe(1);
    });
  });
});
