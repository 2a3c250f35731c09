import { describe, expect, it } from '@jest/globals';
import {
  runViewerRequest,
  type EdgeRequest,
} from '../../../lib/edge/cloudfront-functions-runtime.js';
import {
  embeddedRuleProblems,
  PASS_KEY_HEADER,
  UPSTREAM_ORIGIN_ID,
  viewerRequestFunctionProblems,
  viewerRequestFunctionSource,
  type ViewerRequestFunctionOptions,
} from '../../../lib/edge/viewer-request-function.js';
import { EDGE_FUNCTIONS, type TrafficRules } from '../../../lambda/core/traffic-rules.js';

const tenancy = {
  tenantHeader: 'x-tenant',
  tenantsByHost: { 'acme.example.com': 'acme', 'www.globex.example': 'globex' },
};
const rules: TrafficRules = {
  bypassPaths: ['/api/**'],
  bypassCookies: ['__prerender_bypass'],
  bypassHeaders: ['x-preview'],
  staticPrefixes: ['/_next/static/'],
  allowedQueryParams: ['page'],
  unknownQuery: 'pass',
};
const routed: ViewerRequestFunctionOptions = {
  routing: { rules, upstreamSecretHeader: 'x-origin-key' },
};

const get = (headers: EdgeRequest['headers'], more: Partial<EdgeRequest> = {}): EdgeRequest => ({
  method: 'GET',
  uri: '/',
  querystring: '',
  headers,
  ...more,
});

/** Runs the generated source as CloudFront would, and returns what it decided. */
function run(options: ViewerRequestFunctionOptions, request: EdgeRequest) {
  return runViewerRequest(viewerRequestFunctionSource(options), request);
}

function passedOn(options: ViewerRequestFunctionOptions, request: EdgeRequest) {
  const result = run(options, request);
  if (!('request' in result)) throw new Error(`answered ${result.response.status}`);
  return result;
}

describe('tenant from Host (CloudFront Function)', () => {
  it('sets the tenant of the host', () => {
    const { request } = passedOn(tenancy, get({ host: 'acme.example.com' }));
    expect(request.headers['x-tenant']).toBe('acme');
  });

  it('overwrites a tenant header the viewer forged', () => {
    const { request } = passedOn(tenancy, get({ host: 'acme.example.com', 'x-tenant': 'globex' }));
    expect(request.headers['x-tenant']).toBe('acme');
  });

  it('reads the host case-insensitively, without its port or trailing dot', () => {
    for (const host of ['WWW.Globex.Example', 'www.globex.example:443', 'www.globex.example.']) {
      expect(passedOn(tenancy, get({ host })).request.headers['x-tenant']).toBe('globex');
    }
  });

  it('answers 421 for a host it does not know, whatever tenant header comes with it', () => {
    const attempts = [
      { host: 'evil.example', 'x-tenant': 'acme' },
      { 'x-tenant': 'acme' },
      { host: 'hasOwnProperty' },
    ];
    for (const headers of attempts) {
      const result = run({ ...tenancy, ...routed }, get(headers));
      expect(result).toMatchObject({ response: { status: 421 } });
      if (!('response' in result)) continue;
      expect(JSON.parse(result.response.body.toString())).toMatchObject({ error: 'unknown-host' });
    }
  });

  it('refuses a table CloudFront or the cache key could not use', () => {
    expect(viewerRequestFunctionProblems(tenancy)).toEqual([]);
    expect(viewerRequestFunctionProblems({ ...tenancy, tenantsByHost: {} })).toHaveLength(1);
    expect(
      viewerRequestFunctionProblems({ ...tenancy, tenantsByHost: { 'Acme.Example': 'acme' } })[0],
    ).toMatch(/lower-case host/);
    expect(
      viewerRequestFunctionProblems({ ...tenancy, tenantsByHost: { 'a.example': 'acme#x' } })[0],
    ).toMatch(/not a tenant name/);
    const many = Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [`site-${i}.example.com`, `tenant-${i}`]),
    );
    expect(viewerRequestFunctionProblems({ ...tenancy, tenantsByHost: many })[0]).toMatch(
      /10240-byte limit/,
    );
  });
});

describe('routing to the upstream (CloudFront Function)', () => {
  it('sends what is not a cached page to the upstream origin, and pages to the origin', () => {
    const cases: [EdgeRequest, string | undefined][] = [
      [get({}, { method: 'POST', uri: '/contact' }), UPSTREAM_ORIGIN_ID],
      [get({}, { uri: '/_next/static/a.js' }), UPSTREAM_ORIGIN_ID],
      [get({}, { uri: '/api/counter' }), UPSTREAM_ORIGIN_ID],
      [get({ cookie: 'theme=dark; __prerender_bypass=x' }), UPSTREAM_ORIGIN_ID],
      [get({ 'X-Preview': '1' }), UPSTREAM_ORIGIN_ID],
      [get({}, { querystring: 'page=2&q=shoes' }), UPSTREAM_ORIGIN_ID],
      [get({ cookie: 'theme=dark' }, { querystring: 'page=2' }), undefined],
    ];
    for (const [request, origin] of cases) {
      expect({ uri: request.uri, origin: passedOn(routed, request).origin }).toEqual({
        uri: request.uri,
        origin,
      });
    }
  });

  it('gives every request it sends to the upstream a cache key of its own, static ones too, and pages none', () => {
    // A static asset's request carries the pass key as well: should CloudFront pick the default
    // behaviour for a path the rules class as static, it is not shared with the viewer's cookies.
    const upstream = ['/_next/static/a.js', '//_next/static/a.js', '/api/counter'];
    for (const uri of upstream) {
      const passed = passedOn(routed, get({ cookie: 'sess=1' }, { uri }));
      expect({ uri, key: passed.request.headers[PASS_KEY_HEADER] }).toEqual({
        uri,
        key: expect.stringMatching(/.+/),
      });
    }
    const page = passedOn(routed, get({ [PASS_KEY_HEADER]: 'forged' }, { uri: '/a' }));
    expect(page.request.headers[PASS_KEY_HEADER]).toBeUndefined();
  });

  it("answers another method than GET or HEAD under /_isr/ itself: 405, never the origin's OAC", () => {
    const result = run(routed, get({}, { method: 'POST', uri: '/_isr/revalidate' }));
    expect('response' in result && result.response.status).toBe(405);
  });

  it('classes a path as CloudFront normalises it to pick a behaviour (RFC 3986), as the behaviours do', () => {
    for (const uri of ['/%61pi/counter', '//api/counter', '/x/../api/counter']) {
      expect(passedOn(routed, get({}, { uri })).origin).toBe(UPSTREAM_ORIGIN_ID);
    }
    // The raw path goes on: CloudFront sends the origin what the viewer sent.
    expect(passedOn(routed, get({}, { uri: '/%61pi/counter' })).request.uri).toBe('/%61pi/counter');
  });

  it('fits CloudFront’s 10 KB with room to spare: the embedded rules and the handler without indentation or comments', () => {
    const source = viewerRequestFunctionSource(routed);
    expect(source.split('\n').filter((line) => /^\s/.test(line))).toEqual([]);
    expect(Buffer.byteLength(source)).toBeLessThan(10_240 - 768);
  });

  it("copies the viewer's Host, port included, into X-Forwarded-Host, over any the viewer sent", () => {
    const { request } = passedOn(
      routed,
      get({ host: 'shop.example.com:8443', 'x-forwarded-host': 'evil.example' }),
    );
    expect(request.headers['x-forwarded-host']).toBe('shop.example.com:8443');
    expect(
      passedOn(routed, get({ 'x-forwarded-host': 'evil' })).request.headers,
    ).not.toHaveProperty('x-forwarded-host');
  });

  it('strips privileged headers and the upstream secret, but keeps the tenant header', () => {
    const sent = {
      host: 'acme.example.com',
      'x-prerender-revalidate': 'preview-id',
      'x-middleware-subrequest': 'middleware',
      'x-isr-anything': '1',
      'x-invoke-path': '/x',
      'x-origin-key': 'forged',
      accept: 'text/html',
    };
    const { request } = passedOn(
      { ...tenancy, ...routed, tenantHeader: 'x-isr-tenant' },
      get(sent),
    );
    expect(Object.keys(request.headers).sort()).toEqual([
      'accept',
      'host',
      'x-forwarded-host',
      'x-isr-tenant',
    ]);
  });

  it("drops parameters outside the allow-list in 'drop' mode, and keeps the page cached", () => {
    const drop = { routing: { rules: { ...rules, unknownQuery: 'drop' as const } } };
    const result = passedOn(drop, get({}, { querystring: 'utm_source=x&page=2&page=3' }));
    expect(result).toMatchObject({ origin: undefined, request: { querystring: 'page=2&page=3' } });
  });

  it('routes nothing and strips nothing without an upstream (tenancy alone)', () => {
    const source = viewerRequestFunctionSource(tenancy);
    expect(source).not.toContain("from 'cloudfront'");
    const result = passedOn(
      tenancy,
      get({ host: 'acme.example.com', 'x-isr-x': '1' }, { method: 'POST' }),
    );
    expect(result.origin).toBeUndefined();
    expect(result.request.headers['x-isr-x']).toBe('1');
  });

  it('refuses at synth an embedded rule that cannot run on its own (negative control)', () => {
    expect(embeddedRuleProblems()).toEqual([]);
    // what esbuild's keepNames makes of a rule with an inner function: a helper call
    expect(
      embeddedRuleProblems([
        ...EDGE_FUNCTIONS.filter((fn) => fn.name !== 'classifyRequest'),
        { toString: () => 'function classifyRequest(f, r) { return __name(f); }' } as never,
      ])[0],
    ).toMatch(/do not run on their own/);
    expect(
      embeddedRuleProblems([
        ...EDGE_FUNCTIONS.filter((fn) => fn.name !== 'classifyRequest'),
        {
          toString: () =>
            "function classifyRequest() { return { class: 'cached', reason: 'page' }; }",
        } as never,
      ])[0],
    ).toMatch(/decide differently/);
  });
});
