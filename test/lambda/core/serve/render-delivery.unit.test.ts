/**
 * Issue 31, fix 11: the first request to a page whose answer is not stored costs one upstream
 * call, not two, when the render's request was the viewer's own (no cookie, no credential): the
 * viewer gets the render's answer, as Varnish delivers a miss that turns hit-for-pass. A viewer
 * with a cookie or a credential still gets the upstream's answer to their own request (the
 * negative controls), and no answer of either kind is ever shared.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpPassThrough } from '../../../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../../../lambda/adapters/renderer/http.js';
import type { HeaderPairs } from '../../../../lambda/core/forwarding.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { startHttpServer } from '../../../helpers/http-server.js';
import { memoryService } from '../../../helpers/memory-service.js';

type Server = Awaited<ReturnType<typeof startHttpServer>>;
let upstream: Server | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

/** An upstream answering every request per viewer (`private`), saying whose request it was. */
const perViewer = (extra: Record<string, string | string[]> = {}) =>
  function answer(req: IncomingMessage, res: ServerResponse) {
    res.writeHead(200, {
      'content-type': 'text/html',
      'cache-control': 'private, no-store',
      'cache-tag': 'internal-tag',
      ...extra,
    });
    res.end(`<p>cookie: ${req.headers.cookie ?? 'none'}</p>`);
  };

async function setup(handle: (req: IncomingMessage, res: ServerResponse) => void = perViewer()) {
  upstream = await startHttpServer(handle);
  const service = memoryService({
    renderer: new HttpRenderer({ originUrl: upstream.url, maxBodyBytes: 100_000 }),
    passThrough: new HttpPassThrough({ originUrl: upstream.url, maxBodyBytes: 100_000 }),
    hitForPassSeconds: 300,
  });
  const deps = { ...service.originDeps, internalAnswerHeaders: ['cache-tag'] };
  const server = upstream;
  const ask = (headers: HeaderPairs = [], method = 'GET', rawPath = '/account', query = '') =>
    servePage(deps, {
      method,
      rawPath,
      rawQueryString: query,
      tenant: undefined,
      ifNoneMatch: undefined,
      headers,
    });
  /** The upstream's requests so far: renders carry `x-isr-regeneration`, passes do not. */
  const trips = () => ({
    renders: server.seen.filter((r) => r.headers['x-isr-regeneration'] === '1').length,
    passes: server.seen.filter((r) => r.headers['x-isr-regeneration'] === undefined).length,
  });
  return { ask, trips };
}

const text = (body: Uint8Array | undefined) => new TextDecoder().decode(body);

describe('a render refused for storage, delivered to the viewer whose request it was', () => {
  it('a cookie-free first request: one upstream call, the render answer, private', async () => {
    const { ask, trips } = await setup();
    const first = await ask([['accept', 'text/html']]);
    expect(trips()).toEqual({ renders: 1, passes: 0 });
    expect(first.status).toBe(200);
    expect(text(first.body)).toBe('<p>cookie: none</p>');
    expect(first.headers['cache-control']).toBe('private, no-store');
    expect(first.headers['x-isr-cache']).toBe('PASS');
    expect(first.headers['cache-status']).toBe('facetheory-isr; fwd=bypass; detail=uncacheable');
    expect(first.headers['cache-tag']).toBeUndefined();
    expect(first.detail).toMatchObject({ delivered: 'render' });
  });

  it('negative control: a viewer with a cookie gets their own answer (render, then pass)', async () => {
    const { ask, trips } = await setup();
    const first = await ask([['cookie', 'session=alice']]);
    expect(trips()).toEqual({ renders: 1, passes: 1 });
    expect(text(first.body)).toBe('<p>cookie: session=alice</p>');
    expect(first.headers['cache-tag']).toBeUndefined();
    expect(first.detail).not.toHaveProperty('delivered');
  });

  it('negative control: a credential of the viewer (Authorization not SigV4) passes too', async () => {
    const { ask, trips } = await setup();
    await ask([['authorization', 'Bearer token-of-alice']]);
    expect(trips()).toEqual({ renders: 1, passes: 1 });
  });

  it("CloudFront's origin access control signature is not the viewer's: delivered", async () => {
    const { ask, trips } = await setup();
    const signature = 'AWS4-HMAC-SHA256 Credential=AKID/20261128/us-east-1/lambda/aws4_request';
    await ask([['authorization', signature]]);
    expect(trips()).toEqual({ renders: 1, passes: 0 });
  });

  it('negative control: another spelling of the key (a slash, a dropped parameter) passes', async () => {
    const { ask, trips } = await setup();
    await ask([], 'GET', '/account/');
    expect(trips()).toEqual({ renders: 1, passes: 1 });
    await ask([], 'GET', '/account', 'utm_source=mail');
    expect(trips()).toEqual({ renders: 1, passes: 2 }); // the key is marked: a pass alone
  });

  it('kept parameters in another order are the same request: delivered', async () => {
    const { ask, trips } = await setup();
    await ask([], 'GET', '/account', 'page=2&page=1');
    expect(trips()).toEqual({ renders: 1, passes: 0 });
  });

  it('two cookie-free viewers cost two upstream calls (Varnish), not three', async () => {
    const { ask, trips } = await setup();
    await ask();
    const second = await ask();
    expect(second.headers['cache-status']).toBe('facetheory-isr; fwd=bypass; detail=hit-for-pass');
    expect(trips()).toEqual({ renders: 1, passes: 1 });
  });

  it('a cookie the render was given goes to that viewer alone; a HEAD gets no body', async () => {
    const { ask } = await setup(perViewer({ 'set-cookie': ['a=1; Path=/', 'b=2; Path=/'] }));
    const head = await ask([], 'HEAD');
    expect(head.body).toBeUndefined();
    expect(head.cookies).toEqual(['a=1; Path=/', 'b=2; Path=/']);
  });

  it("an answer varying on everything (Vary: *) is asked again with the viewer's request", async () => {
    const { ask, trips } = await setup(perViewer({ vary: '*' }));
    await ask();
    expect(trips()).toEqual({ renders: 1, passes: 1 });
  });

  it("a redirect's Location never names the upstream; the decoded body's encoding is gone", async () => {
    const { ask } = await setup((req, res) => {
      res.writeHead(302, { location: `http://${req.headers.host}/login?next=%2Faccount` });
      res.end();
    });
    const first = await ask();
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe('/login?next=%2Faccount');
    expect(first.headers['content-encoding']).toBeUndefined();
  });
});
