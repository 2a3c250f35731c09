/**
 * Issue 31, fix 1: an answer made with a viewer's cookies is never shared, neither by the table
 * nor by CloudFront. Two viewers with different cookies ask, one after the other, through the
 * local CloudFront of the synthesized distribution, for every reason a request or an answer is
 * passed; the upstream misbehaves as badly as it can (every answer says `public, s-maxage=300`
 * and echoes the cookie in its body and in a Set-Cookie). Neither viewer ever gets the other's.
 * The negative control runs the same requests with the fix taken out (the edge's pass key and
 * the origin's `private`) and finds the leaks it closes.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PASS_KEY_HEADER } from '../../lib/edge/viewer-request-function.js';
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { createObservability } from '../../lambda/shared/observability.js';
import type { EdgeConfig } from '../../local/cloudfront/config.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { startHttpServer } from '../helpers/http-server.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService } from '../helpers/memory-service.js';
import { rewritten, streamingOrigin } from '../helpers/streaming-origin.js';

/** Every answer as shareable as an upstream can say, made with the viewer's own cookie. */
const SHARED = 'public, max-age=60, s-maxage=300';

type Site = Awaited<ReturnType<typeof startSite>>;

async function startSite() {
  return startHttpServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site').pathname;
    const cookie = req.headers.cookie ?? 'none';
    const preview = String(req.headers['x-preview'] ?? '');
    const made = `made for ${cookie} ${preview}`.trim();
    const answer = (status: number, headers: Record<string, string>) => {
      const sent = headers['cache-control'];
      res.writeHead(status, {
        'content-type': 'text/html',
        'set-cookie': `seen=${encodeURIComponent(made)}`,
        // What the control puts back in place of the origin's private.
        ...(sent === undefined ? {} : { 'x-upstream-cc': sent }),
        ...headers,
      });
      res.end(`<p>${made}</p>`);
    };
    if (path === '/vary') return answer(200, { 'cache-control': SHARED, vary: 'Cookie' });
    if (path === '/private') return answer(200, { 'cache-control': `private, ${SHARED}` });
    if (path === '/forbidden') return answer(403, { 'cache-control': SHARED });
    if (path === '/self') return answer(301, { location: '/self/', 'cache-control': SHARED });
    if (path === '/json') return answer(200, { 'content-type': 'application/json' });
    return answer(200, { 'cache-control': SHARED });
  });
}

/** The viewers, and what they send for each reason (a request reason needs something of theirs). */
const VIEWERS = ['alice', 'bob'] as const;
type Viewer = (typeof VIEWERS)[number];
interface Reason {
  readonly path: string;
  readonly method?: string;
  readonly headers: (viewer: Viewer) => Record<string, string>;
}
const session = (viewer: Viewer) => ({ cookie: `session=${viewer}` });
const REASONS: Readonly<Record<string, Reason>> = {
  method: { path: '/page', method: 'POST', headers: session },
  'bypass-path': { path: '/api/me', headers: session },
  'bypass-cookie': { path: '/page', headers: (v) => ({ cookie: `__draft=${v}` }) },
  'bypass-header': { path: '/page', headers: (v) => ({ 'x-preview': v }) },
  'unknown-query': { path: '/page?q=1', headers: session },
  vary: { path: '/vary', headers: session },
  'hit-for-pass': { path: '/vary', headers: session }, // the mark the vary row left
  uncacheable: { path: '/private', headers: session },
  status: { path: '/forbidden', headers: session },
  'self-redirect': { path: '/self', headers: session },
  'no-freshness': { path: '/json', headers: session },
};

interface Answer {
  readonly status: number;
  readonly text: string;
}

function call(base: string, reason: Reason, viewer: Viewer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${reason.path}`,
      { method: reason.method ?? 'GET', headers: reason.headers(viewer), agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: `${JSON.stringify(res.headers['set-cookie'] ?? [])} ${Buffer.concat(chunks).toString()}`,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(reason.method === 'POST' ? 'x=1' : undefined);
  });
}

/** The front over `site` with a fresh service; `unfixed` takes the fix out at both places. */
async function frontOver(site: Site, unfixed: boolean): Promise<HttpFront> {
  const service = memoryService({
    renderer: new HttpRenderer({ originUrl: site.url, maxBodyBytes: 100_000 }),
    passThrough: new HttpPassThrough({ originUrl: site.url, maxBodyBytes: 100_000 }),
    keyPolicy: { allowedQueryParams: [] },
    hitForPassSeconds: 300,
  });
  const origin = streamingOrigin({
    deps: service.originDeps,
    tenantHeader: undefined,
    ...createObservability('origin'),
  });
  // Without the fix: a pass answer keeps the upstream's Cache-Control (in its prelude).
  const handler = !unfixed
    ? origin
    : rewritten(origin, (answer) => {
        const upstream = answer.headers['x-upstream-cc'];
        if (answer.headers['x-isr-cache'] !== 'PASS' || upstream === undefined) return answer;
        return { ...answer, headers: { ...answer.headers, 'cache-control': upstream } };
      });
  const withoutPassKey = (config: EdgeConfig): EdgeConfig => ({
    ...config,
    behaviours: config.behaviours.map((behaviour) => ({
      ...behaviour,
      cachePolicy: {
        ...behaviour.cachePolicy,
        headers: {
          ...behaviour.cachePolicy.headers,
          items: behaviour.cachePolicy.headers.items.filter((name) => name !== PASS_KEY_HEADER),
        },
      },
    })),
  });
  const cloudfront = await testCloudFront(
    {
      renderOriginUrl: site.url,
      bypassPaths: ['/api/**'],
      bypassCookies: ['__draft'],
      bypassHeaders: ['x-preview'],
    },
    handler,
    { alter: unfixed ? withoutPassKey : undefined },
  );
  return startHttpFront({
    handler,
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront,
  });
}

/** Each reason whose answer to one viewer carried the other's cookie, asked alice, bob, alice. */
async function leaks(front: HttpFront): Promise<string[]> {
  const leaked: string[] = [];
  for (const [name, reason] of Object.entries(REASONS)) {
    const answers: [Viewer, Answer][] = [];
    for (const viewer of [...VIEWERS, VIEWERS[0]]) {
      answers.push([viewer, await call(front.url, reason, viewer)]);
    }
    const other = (viewer: Viewer) => VIEWERS.find((v) => v !== viewer) ?? viewer;
    if (answers.some(([viewer, answer]) => answer.text.includes(other(viewer)))) {
      leaked.push(name);
    }
  }
  return leaked;
}

let site: Site;
beforeAll(async () => {
  site = await startSite();
});
afterAll(() => site.close());

describe('two viewers with different cookies, through the local CloudFront (issue 31, fix 1)', () => {
  it('never get an answer made with the other one’s cookie, for any pass reason', async () => {
    const front = await frontOver(site, false);
    try {
      expect(await leaks(front)).toEqual([]);
    } finally {
      await front.close();
    }
  });

  it('negative control: without the pass key and the origin’s private, CloudFront shares them', async () => {
    const front = await frontOver(site, true);
    try {
      expect(await leaks(front)).toEqual([
        'bypass-cookie',
        'bypass-header',
        'unknown-query',
        'vary',
        'hit-for-pass',
        'status',
        'self-redirect',
      ]);
    } finally {
      await front.close();
    }
  });
});
