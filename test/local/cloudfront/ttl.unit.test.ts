/**
 * How long the local CloudFront keeps an answer: RFC 9111 by http-cache-semantics, with the
 * departures CloudFront documents ("Manage how long content stays in the cache (expiration)",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/Expiration.html; "How
 * CloudFront processes HTTP 4xx and 5xx status codes from your origin",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/HTTPStatusCodes.html;
 * "How CloudFront processes HTTP 3xx status codes from your origin",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/http-3xx-status-codes.html).
 */
import { describe, expect, it } from '@jest/globals';
import type { CachePolicyConfig } from '../../../local/cloudfront/config.js';
import { StoredAge, storeVerdict } from '../../../local/cloudfront/ttl.js';
import { TestClock } from '../../helpers/clock.js';

const clock = new TestClock();
const ttls = (minTtl: number, defaultTtl: number, maxTtl: number) =>
  ({ minTtl, defaultTtl, maxTtl }) as CachePolicyConfig;
const pages = ttls(0, 0, 31_536_000);
const ttlOf = (
  status: number,
  headers: Record<string, string>,
  policy = pages,
  errors: Record<string, number> = {},
) => {
  const verdict = storeVerdict(status, headers, policy, errors, clock);
  return verdict.store ? verdict.freshness.ttl : undefined;
};

describe('storeVerdict: 2xx and 3xx', () => {
  it('keeps an answer for its s-maxage (over max-age), within Min and Max TTL', () => {
    expect(ttlOf(200, { 'cache-control': 'public, max-age=5, s-maxage=300' })).toBe(300);
    expect(ttlOf(200, { 'cache-control': 'max-age=60' })).toBe(60);
    expect(ttlOf(200, { 'cache-control': 'max-age=60' }, ttls(0, 0, 30))).toBe(30);
    expect(ttlOf(200, { 'cache-control': 'max-age=5' }, ttls(20, 0, 30))).toBe(20);
  });

  it('reads Expires against Date when no max-age is given, and ignores it when one is', () => {
    const date = new Date(clock.now()).toUTCString();
    const expires = new Date(clock.now() + 120_000).toUTCString();
    expect(ttlOf(200, { date, expires })).toBe(120);
    expect(ttlOf(200, { date, expires, 'cache-control': 'max-age=10' })).toBe(10);
  });

  it('keeps an answer that states no lifetime for the Default TTL (no heuristic freshness)', () => {
    const lastModified = new Date(clock.now() - 86_400_000).toUTCString();
    expect(ttlOf(200, { 'last-modified': lastModified })).toBeUndefined();
    expect(ttlOf(200, { 'last-modified': lastModified }, ttls(0, 86_400, 31_536_000))).toBe(86_400);
  });

  it('honours no-store, no-cache and private with Min TTL 0; keeps them for Min TTL otherwise', () => {
    for (const directive of ['no-store', 'no-cache', 'private, max-age=60']) {
      expect(ttlOf(200, { 'cache-control': directive })).toBeUndefined();
      expect(ttlOf(200, { 'cache-control': directive }, ttls(30, 60, 300))).toBe(30);
    }
  });

  it('stores an answer that sets a cookie, as CloudFront does (unlike a private RFC cache)', () => {
    expect(ttlOf(200, { 'cache-control': 's-maxage=60', 'set-cookie': 'a=1' })).toBe(60);
  });

  it('ignores Vary (CloudFront keys on its policy alone), but Vary: * with Min TTL 0 always forwards', () => {
    expect(ttlOf(200, { 'cache-control': 's-maxage=60', vary: 'Cookie' })).toBe(60);
    const verdict = storeVerdict(
      200,
      { 'cache-control': 's-maxage=60', vary: '*' },
      pages,
      {},
      clock,
    );
    expect(verdict.store && verdict.freshness.alwaysForward).toBe(true);
  });

  it('reads stale-while-revalidate and stale-if-error', () => {
    const verdict = storeVerdict(
      200,
      { 'cache-control': 's-maxage=10, stale-while-revalidate=30, stale-if-error=600' },
      pages,
      {},
      clock,
    );
    expect(verdict).toEqual({
      store: true,
      freshness: { ttl: 10, staleWhileRevalidate: 30, staleIfError: 600, alwaysForward: false },
    });
  });

  it('keeps a 307 or 308 only with Cache-Control', () => {
    expect(ttlOf(307, {}, ttls(0, 60, 300))).toBeUndefined();
    expect(ttlOf(308, { 'cache-control': 'max-age=60' })).toBe(60);
    expect(ttlOf(301, {}, ttls(0, 60, 300))).toBe(60);
  });
});

describe('storeVerdict: 4xx and 5xx', () => {
  it('keeps 404, 405, 414 and 5xx for the Error Caching Minimum TTL (10 s by default), whatever else they say', () => {
    for (const status of [404, 405, 414, 500, 501, 502, 503, 504]) {
      expect(ttlOf(status, { 'cache-control': 'no-store' })).toBe(10);
    }
    expect(ttlOf(503, {}, pages, { '503': 0 })).toBeUndefined();
  });

  it('keeps them for their max-age when it is longer than the minimum', () => {
    expect(ttlOf(404, { 'cache-control': 's-maxage=60' }, pages, { '404': 0 })).toBe(60);
    expect(ttlOf(404, { 'cache-control': 's-maxage=5' })).toBe(10);
  });

  it('keeps 400, 403, 412 and 415 only with max-age or s-maxage; other errors never', () => {
    expect(ttlOf(403, {})).toBeUndefined();
    expect(ttlOf(403, { 'cache-control': 'max-age=30' })).toBe(30);
    expect(ttlOf(401, { 'cache-control': 'max-age=30' })).toBeUndefined();
    expect(ttlOf(410, { 'cache-control': 's-maxage=30' })).toBeUndefined();
  });
});

describe('StoredAge', () => {
  it("counts the origin's Age and the time in the cache, and goes stale after the TTL", () => {
    const local = new TestClock();
    const freshness = { ttl: 60, staleWhileRevalidate: 0, staleIfError: 0, alwaysForward: false };
    const age = new StoredAge(freshness, '10', local);
    expect(age.seconds).toBe(10);
    local.advance(45);
    expect([age.seconds, age.fresh]).toEqual([55, true]);
    local.advance(6);
    expect([age.seconds, age.fresh]).toEqual([61, false]);
  });
});
