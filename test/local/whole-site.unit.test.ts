/**
 * Issue 21, end to end: a small site behind `npm start`'s front (the generated viewer-request
 * function, the upstream origin, the origin handler on in-memory ports). Each row answers as the
 * site does without the cache: status, body bytes, Set-Cookie, Location, Content-Type and
 * Content-Encoding compared with a direct call to the same upstream.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { createObservability } from '../../lambda/shared/observability.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { TestClock } from '../helpers/clock.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService, type MemoryService } from '../helpers/memory-service.js';
import { startSiteUpstream, type SiteUpstream } from '../helpers/site-upstream.js';
import { streamingOrigin } from '../helpers/streaming-origin.js';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** One request, answer as on the wire (no decoding: fetch would gunzip). */
const call = (
  base: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { method: init.method ?? 'GET', headers: init.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });

/** What "as it does without the cache" compares. */
const visible = (answer: Answer) => ({
  status: answer.status,
  body: answer.body.toString('base64'),
  'set-cookie': answer.headers['set-cookie'],
  location: answer.headers.location,
  'content-type': answer.headers['content-type'],
  'content-encoding': answer.headers['content-encoding'],
});

let site: SiteUpstream;
let front: HttpFront;
let service: MemoryService;
/** The local CloudFront's clock (the origin's is the memory service's own). */
const edgeClock = new TestClock(Math.floor(Date.now() / 1000));

beforeAll(async () => {
  site = await startSiteUpstream();
  service = memoryService({
    renderer: new HttpRenderer({ originUrl: site.url, maxBodyBytes: 100_000 }),
    passThrough: new HttpPassThrough({ originUrl: site.url, maxBodyBytes: 100_000 }),
    keyPolicy: { allowedQueryParams: ['page'] },
    hitForPassSeconds: 300,
  });
  const handler = streamingOrigin({
    deps: service.originDeps,
    tenantHeader: undefined,
    ...createObservability('origin'),
  });
  // CloudFront as the construct configures it for these settings.
  const cloudfront = await testCloudFront(
    {
      renderOriginUrl: site.url,
      bypassCookies: ['__draft'],
      staticPrefixes: ['/_next/static/', '/_astro/'],
      allowedQueryParams: ['page'],
      unknownQuery: 'pass',
    },
    handler,
    { clock: edgeClock },
  );
  front = await startHttpFront({
    handler,
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront,
  });
});

afterAll(async () => {
  await front.close();
  await site.close();
});

/** Asks the front and then the upstream directly; both answers. */
async function both(path: string, init: Parameters<typeof call>[2] = {}) {
  const viaCache = await call(front.url, path, init);
  const direct = await call(site.url, path, init);
  return { viaCache, direct };
}

describe('the whole site behind the cache (issue 21)', () => {
  it('a dynamic page (reads cookies): the viewer gets their page, not a 502; nothing stored', async () => {
    const { viaCache, direct } = await both('/dynamic', { headers: { cookie: 's=1' } });
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.body.toString()).toBe('<p>hello s=1 </p>');
    expect(viaCache.headers['x-isr-cache']).toBe('PASS');
    expect(viaCache.headers['cache-status']).toBe('facetheory-isr; fwd=bypass; detail=uncacheable');
    expect(service.state.metas.size).toBe(0);
    // With a query off the allow-list, the edge sends it to the upstream directly.
    const searched = await both('/dynamic?q=1', { headers: { cookie: 's=1' } });
    expect(visible(searched.viaCache)).toEqual(visible(searched.direct));
  });

  it('an unknown URL: the upstream 404, as it is', async () => {
    const { viaCache, direct } = await both('/no/such/page');
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.status).toBe(404);
  });

  it('an API route without Cache-Control runs on every GET (never cached)', async () => {
    const first = await call(front.url, '/api/data');
    const second = await call(front.url, '/api/data');
    expect(first.headers['content-type']).toBe('application/json');
    const calls = (answer: Answer) =>
      (JSON.parse(answer.body.toString()) as { calls: number }).calls;
    // Hit-for-pass: after the first answer, each GET runs the route once (no render beside it).
    expect(calls(second)).toBe(calls(first) + 1);
    expect(second.headers['cache-status']).toBe('facetheory-isr; fwd=bypass; detail=hit-for-pass');
    expect(second.headers['x-isr-cache']).toBe('PASS');
  });

  it('a draft session (bypass cookie) reaches the upstream; others get the published page', async () => {
    const { viaCache, direct } = await both('/post', { headers: { cookie: '__draft=1' } });
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.body.toString()).toBe('<p>draft</p>');
    const published = await call(front.url, '/post');
    expect(published.body.toString()).toBe('<p>published</p>');
    expect(published.headers['x-isr-cache']).toBe('MISS');
  });

  it('a form POST: the 303, its Location and each Set-Cookie, as the site sends them', async () => {
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=x',
    };
    const { viaCache, direct } = await both('/form', init);
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.headers['set-cookie']).toEqual(['flash=name=x; Path=/', 'seen=1; HttpOnly']);
  });

  it("static assets keep the upstream's immutable Cache-Control and gzip bytes; never stored", async () => {
    const stored = service.state.metas.size;
    const init = { headers: { 'accept-encoding': 'gzip' } };
    const { viaCache, direct } = await both('/_next/static/app.js', init);
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(service.state.metas.size).toBe(stored);
  });

  it('an image optimizer: its query reaches it, Accept picks the format, Vary is kept', async () => {
    for (const accept of ['image/webp,*/*', 'image/png']) {
      const init = { headers: { accept } };
      const { viaCache, direct } = await both('/_next/image?url=%2Fa.png&w=64&q=75', init);
      expect(visible(viaCache)).toEqual(visible(direct));
      expect(viaCache.headers.vary).toBe('Accept');
    }
  });

  it("Astro trailingSlash: 'always': no redirect loop; each path answers as the site does", async () => {
    for (const path of ['/slashy/', '/slashy', '/slashy/']) {
      const { viaCache, direct } = await both(path);
      expect(visible(viaCache)).toEqual(visible(direct));
    }
  });

  it('Astro server islands: query parameters off the allow-list reach the upstream', async () => {
    const { viaCache, direct } = await both('/_server-islands/cart?e=1&p=2&s=3');
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.body.toString()).toBe('<p>island ?e=1&p=2&s=3</p>');
  });

  it('Astro prerendered pages (public, max-age=0) are cached with the default freshness', async () => {
    const first = await call(front.url, '/prerendered');
    const second = await call(front.url, '/prerendered');
    expect(first.headers['x-isr-cache']).toBe('MISS');
    expect(first.headers['x-cache']).toBe('Miss from cloudfront');
    // The page's s-maxage is its freshness: CloudFront answers the next viewer itself.
    expect(second.headers['x-cache']).toBe('Hit from cloudfront');
    expect(second.headers.age).toBe('0');
    expect(second.body.toString()).toBe(first.body.toString());
    expect(site.state.renders.get('/prerendered')).toBe(1);
  });

  it("a 404 under a static prefix is never stored by the origin; CloudFront keeps it for the upstream's max-age", async () => {
    expect((await call(front.url, '/_astro/chunk.js')).status).toBe(404);
    site.state.deployed.add('/_astro/chunk.js');
    // The 404 said max-age=60: CloudFront serves it that long (the error caching minimum is 0).
    expect((await call(front.url, '/_astro/chunk.js')).status).toBe(404);
    edgeClock.advance(61);
    const after = await call(front.url, '/_astro/chunk.js');
    expect(after.status).toBe(200);
    expect(service.state.metas.size).toBeGreaterThan(0); // only the pages above
  });

  it('a redirect with no body is sent with no content type (never application/octet-stream)', async () => {
    const { viaCache, direct } = await both('/old');
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.headers['content-type']).toBeUndefined();
    const again = await call(front.url, '/old');
    expect(again.headers['x-cache']).toBe('Hit from cloudfront');
    expect(again.headers['content-type']).toBeUndefined();
  });
});
