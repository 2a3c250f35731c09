/**
 * Issue 31, fix 3: a bypass path asked for in another spelling. CloudFront normalises a path as
 * RFC 3986 says (unreserved escapes decoded, dot segments and `//` removed) before it picks a
 * behaviour, and sends the raw path on ("Cache behavior settings", Path pattern,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/DownloadDistValuesCacheBehavior.html#DownloadDistValuesPathPattern):
 * `/%61pi/me` takes the `/api/*` behaviour and never reaches the page cache. It does not decode
 * a reserved character (`%2B` stays), which the origin's key does decode once: such a spelling
 * of a bypass path reaches the origin, which must pass it, never render or store it.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { createObservability } from '../../lambda/shared/observability.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { startHttpServer } from '../helpers/http-server.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService, type MemoryService } from '../helpers/memory-service.js';
import { streamingOrigin } from '../helpers/streaming-origin.js';

const BYPASS = ['/api/**', '/a+b/**'];
let site: Awaited<ReturnType<typeof startHttpServer>>;
let service: MemoryService;
let front: HttpFront;
const renders: string[] = [];

const get = (path: string) =>
  new Promise<{ status: number; cache: unknown; body: string }>((resolve, reject) => {
    const req = request(`${front.url}${path}`, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          cache: res.headers['x-isr-cache'],
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });

beforeAll(async () => {
  site = await startHttpServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'public, s-maxage=60' });
    res.end(`<p>upstream ${req.url}</p>`);
  });
  const http = new HttpRenderer({ originUrl: site.url, maxBodyBytes: 100_000 });
  service = memoryService({
    renderer: {
      render: (request) => {
        renders.push(request.cacheKey.path);
        return http.render(request);
      },
    },
    passThrough: new HttpPassThrough({ originUrl: site.url, maxBodyBytes: 100_000 }),
    keyPolicy: { allowedQueryParams: [] },
  });
  const handler = streamingOrigin({
    // As build.ts wires it: the paths the edge routes past the cache.
    deps: { ...service.originDeps, routing: { bypassPaths: BYPASS, staticPrefixes: [] } },
    tenantHeader: undefined,
    ...createObservability('origin'),
  });
  const settings = { renderOriginUrl: site.url, bypassPaths: BYPASS };
  front = await startHttpFront({
    handler,
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront: await testCloudFront(settings, handler),
  });
});

afterAll(async () => {
  await front.close();
  await site.close();
});

describe('a bypass path in another spelling (issue 31, fix 3)', () => {
  it('unreserved escapes, dot segments and // take the bypass behaviour: the upstream, never the cache', async () => {
    for (const path of ['/%61pi/me', '//api/me', '/x/../api/me', '/api/%6De']) {
      const answer = await get(path);
      expect([answer.status, answer.cache]).toEqual([200, undefined]);
    }
    expect(renders).toEqual([]);
  });

  it('a reserved character CloudFront leaves encoded reaches the origin, which passes it', async () => {
    const answer = await get('/a%2Bb/x');
    expect([answer.status, answer.cache]).toEqual([200, 'PASS']);
    expect(answer.body).toBe('<p>upstream /a%2Bb/x</p>');
    expect(renders).toEqual([]);
    expect(service.state.metas.size).toBe(0);
  });
});
