/**
 * The cache key and the origin request from a behaviour's policies ("Understand the cache key",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-the-cache-key.html;
 * "Control origin requests with a policy",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/controlling-origin-requests.html).
 */
import { describe, expect, it } from '@jest/globals';
import type {
  CachePolicyConfig,
  OriginRequestPolicyConfig,
} from '../../../local/cloudfront/config.js';
import {
  edgeCacheKeyOf,
  forwardedParts,
  type ViewerRequest,
} from '../../../local/cloudfront/requests.js';

const policy = (changes: Partial<CachePolicyConfig> = {}): CachePolicyConfig => ({
  name: 'test',
  minTtl: 0,
  defaultTtl: 0,
  maxTtl: 31_536_000,
  headers: { behavior: 'none', items: [] },
  cookies: { behavior: 'none', items: [] },
  queryStrings: { behavior: 'none', items: [] },
  gzip: false,
  brotli: false,
  ...changes,
});

const request = (changes: Partial<ViewerRequest> = {}): ViewerRequest => ({
  method: 'GET',
  uri: '/page',
  querystring: '',
  headers: {},
  clientIp: '203.0.113.7',
  ...changes,
});

describe('edgeCacheKeyOf', () => {
  it('keys on the path and nothing the policy does not name', () => {
    const key = edgeCacheKeyOf(policy(), request());
    expect(
      edgeCacheKeyOf(
        policy(),
        request({ querystring: 'a=1', headers: { cookie: 's=alice', 'x-thing': '1' } }),
      ),
    ).toBe(key);
    expect(edgeCacheKeyOf(policy(), request({ uri: '/other' }))).not.toBe(key);
  });

  it('keys on whitelisted query strings, in the order the viewer sent them', () => {
    const keyed = policy({ queryStrings: { behavior: 'whitelist', items: ['page', 'lang'] } });
    const a = edgeCacheKeyOf(keyed, request({ querystring: 'page=1&_rsc=abc&lang=en' }));
    expect(edgeCacheKeyOf(keyed, request({ querystring: 'page=1&lang=en&_rsc=xyz' }))).toBe(a);
    expect(edgeCacheKeyOf(keyed, request({ querystring: 'lang=en&page=1' }))).not.toBe(a);
    const all = policy({ queryStrings: { behavior: 'all', items: [] } });
    expect(edgeCacheKeyOf(all, request({ querystring: '_rsc=1' }))).not.toBe(
      edgeCacheKeyOf(all, request({ querystring: '_rsc=2' })),
    );
  });

  it('keys on whitelisted headers (names in any case) and cookies, not others', () => {
    const keyed = policy({
      headers: { behavior: 'whitelist', items: ['x-tenant'] },
      cookies: { behavior: 'whitelist', items: ['__draft'] },
    });
    const acme = edgeCacheKeyOf(keyed, request({ headers: { 'x-tenant': 'acme', cookie: 's=1' } }));
    expect(edgeCacheKeyOf(keyed, request({ headers: { 'x-tenant': 'acme', cookie: 's=2' } }))).toBe(
      acme,
    );
    expect(edgeCacheKeyOf(keyed, request({ headers: { 'x-tenant': 'globex' } }))).not.toBe(acme);
    expect(
      edgeCacheKeyOf(keyed, request({ headers: { 'x-tenant': 'acme', cookie: '__draft=1' } })),
    ).not.toBe(acme);
  });

  it('keys on the normalised Accept-Encoding only when the policy turns Gzip or Brotli on', () => {
    const plain = policy();
    const gzip = policy({ gzip: true, brotli: true });
    const of = (p: CachePolicyConfig, encoding: string) =>
      edgeCacheKeyOf(p, request({ headers: { 'accept-encoding': encoding } }));
    expect(of(plain, 'gzip')).toBe(of(plain, 'identity'));
    expect(of(gzip, 'gzip, deflate')).toBe(of(gzip, 'deflate, gzip;q=0.5'));
    expect(of(gzip, 'gzip, br')).not.toBe(of(gzip, 'gzip'));
  });
});

describe('forwardedParts', () => {
  const allButHost: OriginRequestPolicyConfig = {
    name: 'all-but-host',
    headers: { behavior: 'allExcept', items: ['host'] },
    cookies: { behavior: 'all', items: [] },
    queryStrings: { behavior: 'all', items: [] },
  };
  const viewer = request({
    querystring: 'page=2&utm=x',
    headers: { host: 'www.example.com', 'x-tenant': 'acme', cookie: 's=1', 'user-agent': 'ua' },
  });

  it('without an origin request policy, forwards only what is in the cache key', () => {
    const keyed = policy({
      headers: { behavior: 'whitelist', items: ['x-tenant'] },
      queryStrings: { behavior: 'whitelist', items: ['page'] },
    });
    expect(forwardedParts(keyed, undefined, viewer)).toEqual({
      headers: [['x-tenant', 'acme']],
      cookies: [],
      query: [['page', '2']],
    });
  });

  it("adds the origin request policy's: here every header but Host, every cookie and query string", () => {
    const parts = forwardedParts(policy(), allButHost, viewer);
    expect(parts.headers.map(([name]) => name).sort()).toEqual(['user-agent', 'x-tenant']);
    expect(parts.cookies).toEqual([['s', '1']]);
    expect(parts.query).toEqual([
      ['page', '2'],
      ['utm', 'x'],
    ]);
  });
});
