import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { IncomingHttpHeaders } from 'node:http';
import { HttpRenderer } from '../../../../lambda/adapters/renderer/http.js';
import type { CacheKeyPolicy } from '../../../../lambda/core/page/cache-key.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { NEXT_VARIANT_HEADERS } from '../../../../lambda/core/settings/presets.js';
import { startHttpServer } from '../../../helpers/http-server.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { rscSearchParam, treePrefetchHeaders } from '../../../helpers/next-rsc.js';

type Server = Awaited<ReturnType<typeof startHttpServer>>;
let upstream: Server;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const rsc = req.headers.rsc === '1';
    res
      .writeHead(200, {
        'content-type': rsc ? 'text/x-component' : 'text/html',
        'cache-control': 's-maxage=3600',
      })
      .end(rsc ? '0:{}' : '<p>page</p>');
  });
});
afterAll(() => upstream.close());

/** Everything a viewer of a Next.js site sends with a prefetch, and some it should not. */
const VIEWER = {
  ...treePrefetchHeaders(),
  cookie: 'session=secret; __prerender_bypass=abc',
  authorization: 'Bearer secret',
  'next-router-state-tree': '%5B%22%22%5D',
  'x-forwarded-for': '203.0.113.9',
  'accept-language': 'fr',
  'user-agent': 'viewer',
};

function origin(variants: CacheKeyPolicy['variants']) {
  const renderer = new HttpRenderer({
    originUrl: upstream.url,
    maxBodyBytes: 1 << 20,
    variantParam: 'next-rsc',
  });
  const service = memoryService({ renderer, keyPolicy: { allowedQueryParams: [], variants } });
  return (headers: Record<string, string>) =>
    servePage(service.originDeps, {
      method: 'GET',
      rawPath: '/isr',
      rawQueryString: '_rsc=made-up',
      tenant: undefined,
      ifNoneMatch: undefined,
      variantHeaders: headers,
    });
}

describe('a variant render over HTTP', () => {
  it("gets the variant's headers and the _rsc Next expects, and no other header of the viewer's", async () => {
    seen.length = 0;
    const reply = await origin(NEXT_VARIANT_HEADERS)(VIEWER);
    expect(reply).toMatchObject({ status: 200, cacheStatus: 'MISS' });
    expect(reply.headers['content-type']).toBe('text/x-component');
    const [render] = seen;
    expect(render.url).toBe(`/isr?_rsc=${rscSearchParam(treePrefetchHeaders())}`);
    expect(render.headers).toMatchObject(treePrefetchHeaders());
    for (const name of ['cookie', 'authorization', 'next-router-state-tree', 'x-forwarded-for']) {
      expect(render.headers[name]).toBeUndefined();
    }
    // fetch sends its own `accept-language: *`; never the viewer's.
    expect(render.headers['accept-language']).not.toBe(VIEWER['accept-language']);
    expect(render.headers['user-agent']).toBe('facetheory-isr (regeneration)');
  });

  it('negative control: a header in the variant set does reach the render', async () => {
    seen.length = 0;
    const withTree = [
      ...NEXT_VARIANT_HEADERS,
      { name: 'next-router-state-tree', charset: '%A-Za-z0-9' },
    ];
    await origin(withTree)(VIEWER);
    expect(seen[0].headers['next-router-state-tree']).toBe(VIEWER['next-router-state-tree']);
  });

  it('renders the page itself with no variant header and no _rsc', async () => {
    seen.length = 0;
    await origin(NEXT_VARIANT_HEADERS)({ cookie: 'session=secret' });
    expect(seen[0].url).toBe('/isr');
    expect(seen[0].headers.rsc).toBeUndefined();
    expect(seen[0].headers.cookie).toBeUndefined();
  });
});
