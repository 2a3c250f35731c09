import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpRenderer } from '../../../../lambda/adapters/renderer/http.js';
import { StaticSecretSource } from '../../../../lambda/adapters/secret-source/static.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import { RenderRefusedError, RenderRetryableError } from '../../../../lambda/core/errors.js';
import { admitPage } from '../../../../lambda/core/regenerate/render-policy.js';
import { startHttpServer } from '../../../helpers/http-server.js';

type Server = Awaited<ReturnType<typeof startHttpServer>>;
let upstream: Server;
/** Called when the upstream receives a request for /slow. */
let slowArrived: (() => void) | undefined;

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const route = url.pathname.replace(/^\/app/, '');
    switch (route) {
      case '/moved':
        res.writeHead(301, { location: `http://${req.headers.host}/app/new-home?x=1` }).end();
        return;
      case '/elsewhere':
        res.writeHead(302, { location: 'https://example.org/page' }).end();
        return;
      case '/gone':
        res.writeHead(410, { 'content-type': 'text/html' }).end('gone');
        return;
      case '/down':
        res.writeHead(503).end('down');
        return;
      case '/private':
        res.writeHead(200, { 'cache-control': 'private, max-age=60' }).end('secret');
        return;
      case '/huge':
        res.writeHead(200, { 'content-type': 'text/html' }).end('x'.repeat(4096));
        return;
      case '/huge-chunked':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('x'.repeat(2048));
        res.end('x'.repeat(2048));
        return;
      case '/slow':
        slowArrived?.(); // and no answer, until the caller gives up
        return;
      default:
        res
          .writeHead(200, {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'public, max-age=5, s-maxage=120',
          })
          .end(`<p>${url.pathname}${url.search}</p>`);
    }
  });
});
afterAll(() => upstream.close());

const keyOf = (rawPath: string, rawQueryString = '', tenant?: string) =>
  normaliseCacheKey({ rawPath, rawQueryString, tenant }, { allowedQueryParams: ['page'] });
const renderer = (options: { tenantHeader?: string; maxBodyBytes?: number } = {}) =>
  new HttpRenderer({ originUrl: `${upstream.url}/app/`, maxBodyBytes: 1024 * 1024, ...options });
const policy = { maxBodyBytes: 1024 * 1024, defaultRevalidateSeconds: 60 };
const render = (r: HttpRenderer, rawPath: string, query = '', tenant?: string) =>
  r.render({ cacheKey: keyOf(rawPath, query, tenant), signal: AbortSignal.timeout(1_000) });
const text = (body: Uint8Array) => new TextDecoder().decode(body);

describe('HttpRenderer', () => {
  it('fetches the canonical key under the origin path; the policy takes s-maxage as the freshness', async () => {
    const page = await render(renderer(), '/blog//caf%C3%A9/', 'utm=1&page=2');
    expect(page).toMatchObject({
      status: 200,
      contentType: 'text/html; charset=utf-8',
      headers: { 'cache-control': 'public, max-age=5, s-maxage=120' },
    });
    expect(text(page.body)).toBe('<p>/app/blog/caf%C3%A9?page=2</p>');
    expect(admitPage(page, policy).revalidateSeconds).toBe(120);
  });

  it('sends only its own fixed headers, and the tenant under the configured header', async () => {
    upstream.seen.length = 0;
    await render(renderer({ tenantHeader: 'x-isr-tenant' }), '/a', '', 'acme');
    const headers = upstream.seen[0]?.headers ?? {};
    // Exactly the renderer's own headers plus what fetch itself always adds: no viewer header can
    // reach the upstream, because the renderer is only ever given the cache key.
    const addedByFetch = [
      'host',
      'connection',
      'accept-language',
      'sec-fetch-mode',
      'accept-encoding',
    ];
    expect(Object.keys(headers).sort()).toEqual(
      [...addedByFetch, 'accept', 'user-agent', 'x-isr-regeneration', 'x-isr-tenant'].sort(),
    );
    expect(headers['x-isr-tenant']).toBe('acme');
    expect(headers.host).toBe(new URL(upstream.url).host);
  });

  it('returns redirects without following them, relative when they point at the upstream itself', async () => {
    expect(await render(renderer(), '/moved')).toMatchObject({
      status: 301,
      location: '/new-home?x=1',
    });
    expect(await render(renderer(), '/elsewhere')).toMatchObject({
      status: 302,
      location: 'https://example.org/page',
    });
  });

  it('passes the upstream status through for the core to judge', async () => {
    expect((await render(renderer(), '/gone')).status).toBe(410);
    expect((await render(renderer(), '/down')).status).toBe(503);
  });

  it('returns the upstream headers, so the policy refuses a page marked private or no-store', async () => {
    const page = await render(renderer(), '/private');
    expect(page.headers?.['cache-control']).toBe('private, max-age=60');
    expect(() => admitPage(page, policy)).toThrow(RenderRefusedError);
  });

  it.each(['/huge', '/huge-chunked'])(
    'stops reading a body over the limit and refuses it for good (%s)',
    async (path) => {
      const error = await render(renderer({ maxBodyBytes: 3000 }), path).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RenderRefusedError);
      expect((error as RenderRefusedError).code).toBe('refused:too-large');
    },
  );

  it('reports an unreachable upstream as retryable', async () => {
    const dead = new HttpRenderer({ originUrl: 'http://127.0.0.1:9', maxBodyBytes: 1024 });
    await expect(render(dead, '/a')).rejects.toBeInstanceOf(RenderRetryableError);
  });

  it('stops when its signal aborts, with the abort as the reason', async () => {
    const timeout = new AbortController();
    const { signal } = timeout;
    const arrived = new Promise<void>((resolve) => (slowArrived = resolve));
    const rendering = renderer()
      .render({ cacheKey: keyOf('/slow'), signal })
      .catch((caught: unknown) => caught);
    await arrived; // the upstream has the request and will not answer: the caller times out
    timeout.abort(new DOMException('render timed out', 'TimeoutError'));
    const error = await rendering;
    expect(signal.aborted).toBe(true);
    expect(error).toBe(signal.reason);
    expect((error as Error).name).toBe('TimeoutError');
  });

  it('accepts only http(s) origins', () => {
    expect(() => new HttpRenderer({ originUrl: 'file:///etc/passwd', maxBodyBytes: 1 })).toThrow(
      /http/,
    );
  });

  it('sends the upstream secret in its header, and fails retryably when it cannot be had', async () => {
    upstream.seen.length = 0;
    const withSecret = new HttpRenderer({
      originUrl: upstream.url,
      maxBodyBytes: 1024,
      secretHeader: { name: 'x-isr-origin-secret', secret: new StaticSecretSource('s3cr3t') },
    });
    await render(withSecret, '/a');
    expect(upstream.seen[0]?.headers['x-isr-origin-secret']).toBe('s3cr3t');
    const broken = new HttpRenderer({
      originUrl: upstream.url,
      maxBodyBytes: 1024,
      secretHeader: {
        name: 'x-isr-origin-secret',
        secret: { value: () => Promise.reject(new Error('extension down')) },
      },
    });
    await expect(render(broken, '/a')).rejects.toBeInstanceOf(RenderRetryableError);
  });
});
