/**
 * Issue 31, fix 11, through the local CloudFront of the synthesized distribution: a GET route
 * with no Cache-Control (not stored: `no-freshness`) asked by two cookie-free viewers costs two
 * upstream calls (the first viewer's render, delivered; the second's pass on the hit-for-pass
 * mark), where it cost three. The negative control: a viewer with a cookie is never given the
 * render's answer (made without it), so the first request costs a render and a pass.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { createObservability } from '../../lambda/shared/observability.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { startHttpServer } from '../helpers/http-server.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService } from '../helpers/memory-service.js';
import { streamingOrigin } from '../helpers/streaming-origin.js';

type Site = Awaited<ReturnType<typeof startHttpServer>>;

async function frontOver(site: Site): Promise<HttpFront> {
  const service = memoryService({
    renderer: new HttpRenderer({ originUrl: site.url, maxBodyBytes: 100_000 }),
    passThrough: new HttpPassThrough({ originUrl: site.url, maxBodyBytes: 100_000 }),
    keyPolicy: { allowedQueryParams: [] },
    hitForPassSeconds: 300,
  });
  const handler = streamingOrigin({
    deps: service.originDeps,
    tenantHeader: undefined,
    ...createObservability('origin'),
  });
  const cloudfront = await testCloudFront({ renderOriginUrl: site.url }, handler);
  return startHttpFront({
    handler,
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront,
  });
}

function get(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string; cacheStatus: string }>((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString(),
          cacheStatus: String(res.headers['cache-status'] ?? ''),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

let site: Site;
beforeAll(async () => {
  site = await startHttpServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ cookie: req.headers.cookie ?? 'none' }));
  });
});
afterAll(() => site.close());

/** Upstream requests for one path so far. */
const tripsTo = (path: string) => site.seen.filter((seen) => seen.url === path).length;

describe('the first request to an unstored page renders once before its first byte (fix 11)', () => {
  it('two cookie-free viewers: two upstream calls, the first given its render', async () => {
    const front = await frontOver(site);
    try {
      const first = await get(`${front.url}/json-a`);
      expect(first).toMatchObject({ status: 200, text: '{"cookie":"none"}' });
      expect(first.cacheStatus).toContain('facetheory-isr; fwd=bypass; detail=no-freshness');
      expect(tripsTo('/json-a')).toBe(1);
      const second = await get(`${front.url}/json-a`);
      expect(second.cacheStatus).toContain('detail=hit-for-pass');
      expect(tripsTo('/json-a')).toBe(2);
    } finally {
      await front.close();
    }
  });

  it('negative control: a viewer with a cookie gets their own answer, a second trip', async () => {
    const front = await frontOver(site);
    try {
      const first = await get(`${front.url}/json-b`, { cookie: 'session=alice' });
      expect(first.text).toBe('{"cookie":"session=alice"}');
      expect(tripsTo('/json-b')).toBe(2);
    } finally {
      await front.close();
    }
  });
});
