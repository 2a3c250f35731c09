import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { servePage } from '../../lambda/core/serve/serve.js';
import { NEXT_VARIANT_HEADERS } from '../../lambda/core/settings/presets.js';
import { memoryService } from '../helpers/memory-service.js';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { navigationHeaders, treePrefetchHeaders } from '../helpers/next-rsc.js';

/** A cold `next build` of the fixture takes ~15 s here; CI machines may be slower. */
const BUILD_TIMEOUT_MS = 300_000;

let app: NextApp;
beforeAll(async () => {
  app = await startNextApp();
}, BUILD_TIMEOUT_MS);
afterAll(async () => {
  await app?.stop();
});

/** The origin's use case with in-memory ports, rendering from the fixture under `next start`. */
function origin(variantParam: 'next-rsc' | 'none' = 'next-rsc') {
  const renderer = new HttpRenderer({ originUrl: app.url, maxBodyBytes: 4 << 20, variantParam });
  const keyPolicy = { allowedQueryParams: [], variants: NEXT_VARIANT_HEADERS };
  const service = memoryService({ renderer, keyPolicy });
  return (rawPath: string, headers: Record<string, string>, rawQueryString = '') =>
    servePage(service.originDeps, {
      method: 'GET',
      rawPath,
      rawQueryString,
      tenant: undefined,
      ifNoneMatch: undefined,
      variantHeaders: headers,
    });
}

const text = (body: Uint8Array | undefined) => new TextDecoder().decode(body);

describe('RSC variants rendered by next start', () => {
  it('serves a navigation as RSC, cached apart from the HTML: the second request is a HIT', async () => {
    const get = origin();
    const html = await get('/isr', {});
    expect(html).toMatchObject({ status: 200, cacheStatus: 'MISS' });
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    const first = await get('/isr', { ...navigationHeaders() }, '_rsc=made-up');
    expect(first).toMatchObject({ status: 200, cacheStatus: 'MISS' });
    expect(first.headers['content-type']).toMatch(/^text\/x-component/);
    const second = await get('/isr', { ...navigationHeaders() }, '_rsc=other');
    expect(second.cacheStatus).toBe('HIT');
    expect(text(second.body)).toBe(text(first.body));
    expect(second.headers.vary).toBe('rsc, next-router-prefetch, next-router-segment-prefetch');
  });

  it('renders a tree prefetch with the _rsc Next expects (no 307), smaller than the page', async () => {
    const get = origin();
    const tree = await get('/isr', { ...treePrefetchHeaders() });
    expect(tree.status).toBe(200);
    expect(tree.headers['content-type']).toMatch(/^text\/x-component/);
    const html = await get('/isr', {});
    expect(tree.body!.byteLength).toBeLessThan(html.body!.byteLength);
    expect((await get('/isr', { ...treePrefetchHeaders() })).cacheStatus).toBe('HIT');
  });

  it('negative control: without the _rsc it expects, next start answers the render with a 307', async () => {
    const reply = await origin('none')('/isr', { ...treePrefetchHeaders() });
    // Next answers 307 without Cache-Control: never stored, and with no pass-through wired here
    // the origin refuses it (behind npm start the viewer would get Next's 307 passed through).
    expect(reply.status).toBe(502);
    expect(reply.detail).toMatchObject({ error: { status: 307 } });
  });

  it('never keeps the 404 Next gives a prefetch of a segment the page lacks', async () => {
    const get = origin();
    const headers = { ...treePrefetchHeaders(), 'next-router-segment-prefetch': '/nope/__PAGE__' };
    const reply = await get('/isr', headers);
    expect(reply.cacheStatus).not.toBe('HIT');
    expect(reply.status).not.toBe(200);
    expect((await get('/isr', headers)).cacheStatus).not.toBe('HIT');
  });
});
