/**
 * No viewer's cookie ever reaches a render whose answer is stored: the render is built from the
 * cache key alone, and only a pass-through carries the viewer's request. The negative control
 * runs the same scenario with a renderer that forwards the viewer's cookie (the guard removed).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../../../lambda/adapters/renderer/http.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { startHttpServer } from '../../../helpers/http-server.js';
import { memoryService } from '../../../helpers/memory-service.js';

type Server = Awaited<ReturnType<typeof startHttpServer>>;
let upstream: Server | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

/** Viewer A (with a session) then viewer B (without) ask for a cacheable page; what B gets. */
async function secondViewerSees(
  leak: boolean,
): Promise<{ text: string; renderCookies: unknown[] }> {
  upstream = await startHttpServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'public, s-maxage=60' });
    res.end(`<p>cookie: ${req.headers.cookie ?? 'none'}</p>`);
  });
  let viewerCookie: string | undefined;
  // The guard removed: a renderer that sends the viewer's cookie along with the cache key.
  const leakyFetch: typeof fetch = (url, init) =>
    fetch(url, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), cookie: viewerCookie ?? '' },
    });
  const renderer = new HttpRenderer({
    originUrl: upstream.url,
    maxBodyBytes: 10_000,
    ...(leak ? { fetch: leakyFetch } : {}),
  });
  const service = memoryService({
    renderer,
    passThrough: new HttpPassThrough({ originUrl: upstream.url, maxBodyBytes: 10_000 }),
  });
  const ask = (cookie: string | undefined) => {
    viewerCookie = cookie;
    return servePage(service.originDeps, {
      method: 'GET',
      rawPath: '/page',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
      headers: cookie === undefined ? [] : [['cookie', cookie]],
    });
  };
  const first = await ask('session=A');
  expect(first.headers['x-isr-cache']).toBe('MISS');
  const second = await ask(undefined);
  expect(second.headers['x-isr-cache']).toBe('HIT');
  return {
    text: new TextDecoder().decode(second.body),
    renderCookies: upstream.seen.map((seen) => seen.headers.cookie),
  };
}

describe('cookie isolation: a stored page never carries a viewer session', () => {
  it("renders the cached page without the viewer's cookie; the next viewer never sees it", async () => {
    const seen = await secondViewerSees(false);
    expect(seen.text).toBe('<p>cookie: none</p>');
    expect(seen.renderCookies).toEqual([undefined]);
  });

  it('negative control: with the guard removed, the session enters the cache and is caught', async () => {
    const seen = await secondViewerSees(true);
    expect(seen.text).toBe('<p>cookie: session=A</p>');
    expect(seen.renderCookies).toEqual(['session=A']);
  });
});
