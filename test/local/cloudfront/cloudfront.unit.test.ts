/**
 * The local CloudFront end to end, on distributions the construct synthesizes (the demo's, and
 * one routing to an upstream), with recording origins. Each rule names the AWS page it follows.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { UPSTREAM_ORIGIN_ID } from '../../../lib/edge/viewer-request-function.js';
import type { FunctionUrlResult } from '../../../lambda/origin/handler.js';
import { LocalCloudFront, type EdgeAnswer } from '../../../local/cloudfront/cloudfront.js';
import type { EdgeConfig } from '../../../local/cloudfront/config.js';
import {
  FunctionUrlOrigin,
  type LocalOrigin,
  type OriginAnswer,
  type OriginRequest,
} from '../../../local/cloudfront/origins.js';
import type { ViewerRequest } from '../../../local/cloudfront/requests.js';
import { edgePropsOf, loadEdgeConfig } from '../../../local/cloudfront/synth.js';
import { lambdaContext } from '../../../local/worker-poller.js';
import { TestClock } from '../../helpers/clock.js';
import { TEST_EDGE_CACHE } from '../../helpers/local-cloudfront.js';

let demo: EdgeConfig;
let routed: EdgeConfig;

beforeAll(async () => {
  demo = (await loadEdgeConfig(edgePropsOf({}), TEST_EDGE_CACHE)).config;
  routed = (
    await loadEdgeConfig(
      edgePropsOf({
        renderOriginUrl: 'http://127.0.0.1:1',
        bypassPaths: ['/api/**'],
        staticPrefixes: ['/_next/static/'],
      }),
      TEST_EDGE_CACHE,
    )
  ).config;
}, 30_000);

interface Made {
  readonly status?: number;
  readonly headers?: OriginAnswer['headers'];
  readonly body?: string;
}
type Answerer = (request: OriginRequest) => Made;

/** An origin that answers with `answer` and records every request it gets. */
function recordingOrigin(answer: Answerer) {
  const seen: OriginRequest[] = [];
  const origin: LocalOrigin = {
    fetch: (request) => {
      seen.push(request);
      const made = answer(request);
      return Promise.resolve({
        status: made.status ?? 200,
        headers: made.headers ?? [],
        body: [Buffer.from(made.body ?? '')],
      });
    },
  };
  return { origin, seen };
}

/** A CloudFront of `config` whose every origin is `origin`. */
function edgeOf(config: EdgeConfig, origin: LocalOrigin, clock = new TestClock()) {
  const origins = Object.fromEntries(Object.keys(config.origins).map((id) => [id, origin]));
  return new LocalCloudFront({ config, origins, clock });
}

const get = (changes: Partial<ViewerRequest> = {}): ViewerRequest => ({
  method: 'GET',
  uri: '/page',
  querystring: '',
  headers: { host: 'www.example.com' },
  clientIp: '203.0.113.7',
  ...changes,
});
const noBody = () => Promise.resolve(undefined);
const header = (answer: EdgeAnswer, name: string) =>
  answer.headers.filter(([n]) => n === name).map(([, v]) => v);
const xCache = (answer: EdgeAnswer) => header(answer, 'x-cache')[0];

describe('allowed methods (DownloadDistValuesCacheBehavior.html#DownloadDistValuesAllowedHTTPMethods)', () => {
  it('refuses a method the behaviour does not allow with 403, before any origin', async () => {
    const { origin, seen } = recordingOrigin(() => ({}));
    const answer = await edgeOf(demo, origin).handle(get({ method: 'POST' }), noBody);
    expect([answer.status, xCache(answer)]).toEqual([403, 'Error from cloudfront']);
    expect(seen).toHaveLength(0);
  });
});

describe('cache hits, misses and Age (Expiration.html, standard-logs-reference.html)', () => {
  it('keeps a GET for its s-maxage: Miss, then Hit with Age, then a conditional request (RefreshHit on 304)', async () => {
    const clock = new TestClock();
    const { origin, seen } = recordingOrigin((request) =>
      request.headers.some(([n, v]) => n === 'if-none-match' && v === '"v1"')
        ? { status: 304, headers: [['cache-control', 'public, s-maxage=60']] }
        : {
            headers: [
              ['cache-control', 'public, s-maxage=60'],
              ['etag', '"v1"'],
            ],
            body: 'page',
          },
    );
    const edge = edgeOf(demo, origin, clock);
    expect(xCache(await edge.handle(get(), noBody))).toBe('Miss from cloudfront');
    clock.advance(30);
    const hit = await edge.handle(get(), noBody);
    expect([xCache(hit), header(hit, 'age')]).toEqual(['Hit from cloudfront', ['30']]);
    clock.advance(31);
    const refreshed = await edge.handle(get(), noBody);
    expect(xCache(refreshed)).toBe('RefreshHit from cloudfront');
    expect(seen).toHaveLength(2);
    expect(Buffer.concat([...(refreshed.body as Buffer[])]).toString()).toBe('page');
  });

  it('answers a viewer If-None-Match from the cache with 304', async () => {
    const { origin } = recordingOrigin(() => ({
      headers: [
        ['cache-control', 's-maxage=60'],
        ['etag', '"v1"'],
      ],
    }));
    const edge = edgeOf(demo, origin);
    await edge.handle(get(), noBody);
    const answer = await edge.handle(get({ headers: { 'if-none-match': '"v1"' } }), noBody);
    expect(answer.status).toBe(304);
  });

  it('serves a stale object while revalidating within stale-while-revalidate', async () => {
    const clock = new TestClock();
    let version = 1;
    const { origin, seen } = recordingOrigin(() => ({
      headers: [['cache-control', 's-maxage=10, stale-while-revalidate=60']],
      body: `v${version}`,
    }));
    const edge = edgeOf(demo, origin, clock);
    await edge.handle(get(), noBody);
    version = 2;
    clock.advance(20);
    const stale = await edge.handle(get(), noBody);
    expect(Buffer.concat([...(stale.body as Buffer[])]).toString()).toBe('v1');
    await edge.settled();
    expect(seen).toHaveLength(2);
    const fresh = await edge.handle(get(), noBody);
    expect([xCache(fresh), Buffer.concat([...(fresh.body as Buffer[])]).toString()]).toEqual([
      'Hit from cloudfront',
      'v2',
    ]);
  });

  it('serves an expired object when the origin answers 5xx (HTTPStatusCodes.html)', async () => {
    const clock = new TestClock();
    let failing = false;
    const { origin } = recordingOrigin(() =>
      failing
        ? { status: 503, headers: [['cache-control', 'no-store']] }
        : { headers: [['cache-control', 's-maxage=10']], body: 'good' },
    );
    const edge = edgeOf(demo, origin, clock);
    await edge.handle(get(), noBody);
    failing = true;
    clock.advance(11);
    const answer = await edge.handle(get(), noBody);
    expect([answer.status, Buffer.concat([...(answer.body as Buffer[])]).toString()]).toEqual([
      200,
      'good',
    ]);
  });

  it('keeps a 503 for the Error Caching Minimum TTL even with no-store (custom-error-pages-expiration.html)', async () => {
    const clock = new TestClock();
    const { origin, seen } = recordingOrigin(() => ({
      status: 503,
      headers: [['cache-control', 'no-store']],
    }));
    const edge = edgeOf(demo, origin, clock);
    expect(xCache(await edge.handle(get(), noBody))).toBe('Error from cloudfront');
    expect(xCache(await edge.handle(get(), noBody))).toBe('Hit from cloudfront');
    clock.advance(10);
    await edge.handle(get(), noBody);
    expect(seen).toHaveLength(2);
  });

  it('keys on the cache policy alone: another cookie or Vary: Cookie does not split the entry', async () => {
    const { origin, seen } = recordingOrigin((request) => ({
      headers: [
        ['cache-control', 'public, s-maxage=60'],
        ['vary', 'Cookie'],
      ],
      body: `for ${request.cookies.map(([n, v]) => `${n}=${v}`).join(';')}`,
    }));
    const edge = edgeOf(routed, origin);
    await edge.handle(get({ headers: { cookie: 'session=alice' } }), noBody);
    const bob = await edge.handle(get({ headers: { cookie: 'session=bob' } }), noBody);
    // What CloudFront does with such an answer: the next viewer gets the first one's page.
    expect(Buffer.concat([...(bob.body as Buffer[])]).toString()).toBe('for session=alice');
    expect(seen).toHaveLength(1);
  });
});

describe('answers on their way to the viewer (RequestAndResponseBehaviorCustomOrigin.html)', () => {
  it('passes Set-Cookie only when the behaviour forwards cookies', async () => {
    const { origin } = recordingOrigin(() => ({ headers: [['set-cookie', 'a=1']] }));
    expect(header(await edgeOf(demo, origin).handle(get(), noBody), 'set-cookie')).toEqual([]);
    expect(header(await edgeOf(routed, origin).handle(get(), noBody), 'set-cookie')).toEqual([
      'a=1',
    ]);
  });

  it('keeps Vary values it forwards (Accept-Encoding, Cookie), drops the others', async () => {
    const { origin } = recordingOrigin(() => ({ headers: [['vary', 'Accept-Encoding, X-Other']] }));
    expect(header(await edgeOf(demo, origin).handle(get(), noBody), 'vary')).toEqual([
      'Accept-Encoding',
    ]);
  });

  it('refuses an origin answer whose headers pass 20,480 bytes with a 502 (cloudfront-limits.html)', async () => {
    const { origin } = recordingOrigin(() => ({ headers: [['x-big', 'x'.repeat(20_480)]] }));
    const answer = await edgeOf(demo, origin).handle(get(), noBody);
    expect([answer.status, xCache(answer)]).toEqual([502, 'Error from cloudfront']);
  });

  it('removes the cache-tag header from viewers (the response headers policy), keeps the tags for invalidation', async () => {
    const { origin, seen } = recordingOrigin(() => ({
      headers: [
        ['cache-control', 's-maxage=300'],
        ['x-isr-cache-tags', 'Blog, post:1'],
      ],
    }));
    const edge = edgeOf(demo, origin);
    const first = await edge.handle(get(), noBody);
    expect(header(first, 'x-isr-cache-tags')).toEqual([]);
    await edge.handle(get({ uri: '/other' }), noBody);
    expect(edge.invalidate(['#blog'])).toBe(2); // tags are case-insensitive
    await edge.handle(get(), noBody);
    expect(seen).toHaveLength(3);
  });

  it('invalidates a path with all its cached variants, and a trailing * as a prefix (invalidation-specifying-objects.html)', async () => {
    const { origin } = recordingOrigin(() => ({ headers: [['cache-control', 's-maxage=300']] }));
    const edge = edgeOf(demo, origin);
    await edge.handle(get({ uri: '/a/1' }), noBody);
    await edge.handle(get({ uri: '/a/2' }), noBody);
    await edge.handle(get({ uri: '/b' }), noBody);
    expect(edge.invalidate(['/a/1'])).toBe(1);
    expect(edge.invalidate(['/a*'])).toBe(1);
    expect(edge.store.size).toBe(1);
  });
});

describe('routing by behaviour and viewer-request function', () => {
  it('sends a bypass path (normalised: /%61pi/me) to the upstream behaviour, which keeps nothing', async () => {
    const { origin, seen } = recordingOrigin(() => ({
      headers: [['cache-control', 's-maxage=60']],
    }));
    const edge = edgeOf(routed, origin);
    await edge.handle(get({ uri: '/%61pi/me' }), noBody);
    await edge.handle(get({ uri: '/%61pi/me' }), noBody);
    expect(seen).toHaveLength(2); // CachingDisabled
    const behaviour = routed.behaviours.find((b) => b.pathPattern === '/api/*');
    expect(behaviour?.originId).toBe(UPSTREAM_ORIGIN_ID);
  });
});

describe('origin access control in front of the function URL (private-content-restricting-access-to-lambda.html)', () => {
  const events: LambdaFunctionURLEvent[] = [];
  const origin = new FunctionUrlOrigin({
    handler: (event) => {
      events.push(event);
      return Promise.resolve({ statusCode: 200, body: 'ok' } as FunctionUrlResult);
    },
    context: () => lambdaContext(30_000, 'isr-origin'),
    signing: 'always',
  });
  const request = (body: string | undefined, headers: [string, string][] = []): OriginRequest => ({
    method: body === undefined ? 'GET' : 'POST',
    path: '/_isr/x',
    query: [],
    headers,
    cookies: [],
    body: body === undefined ? undefined : Buffer.from(body),
    clientIp: '203.0.113.7',
    requestId: 'r1',
  });

  it('signs every request, replacing the viewer Authorization; the event carries the signing headers', async () => {
    await origin.fetch(request(undefined, [['authorization', 'Bearer viewer']]));
    const headers = events.at(-1)?.headers ?? {};
    expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    expect(Object.keys(headers)).toEqual(
      expect.arrayContaining(['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']),
    );
  });

  it('refuses a body without the viewer-sent x-amz-content-sha256 with 403, as Lambda does', async () => {
    const before = events.length;
    expect((await origin.fetch(request('{"a":1}'))).status).toBe(403);
    const hash = createHash('sha256').update('{"a":1}').digest('hex');
    expect((await origin.fetch(request('{"a":1}', [['x-amz-content-sha256', hash]]))).status).toBe(
      200,
    );
    expect(events.length).toBe(before + 1);
  });
});
