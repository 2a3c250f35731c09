/** How an operator's URL and duration become what the service uses. */
import { describe, expect, it } from '@jest/globals';
import { parseDuration } from '../../cli/commands/page-ops.js';
import { UsageError } from '../../cli/errors.js';
import { cacheKeyOf } from '../../cli/page-key.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';

const single = { allowedQueryParams: ['page'], renderPaths: [], leaseSeconds: 30 };
const tenanted = { ...single, tenantHeader: 'x-tenant', tenants: ['acme'] };

describe('cacheKeyOf', () => {
  it('gives the key the origin gives: origin and fragment dropped, only allowed params, sorted', () => {
    const key = cacheKeyOf('https://example.com/blog//x/?utm=1&page=2#top', undefined, single);
    expect(key).toEqual(
      normaliseCacheKey({ rawPath: '/blog/x', rawQueryString: 'page=2' }, single),
    );
    expect(key.key).toBe('/blog/x?page=2');
  });

  it('puts the tenant in the pk, and insists on one only where the service is multi-tenant', () => {
    expect(cacheKeyOf('/a', 'acme', tenanted).pk).toMatch(/^TENANT#acme#CACHE#/);
    expect(() => cacheKeyOf('/a', undefined, tenanted)).toThrow(UsageError);
    expect(() => cacheKeyOf('/a', 'globex', tenanted)).toThrow(/not served here/);
    expect(() => cacheKeyOf('/a', 'acme', single)).toThrow(/single-tenant/);
  });

  it('reads an address as the revalidate endpoint does (issue 19, item 18)', () => {
    expect(() => cacheKeyOf('ftp://example.com/a', undefined, single)).toThrow(
      'ftp://example.com/a names no page: "ftp://example.com/a" is neither a path starting ' +
        'with "/" nor an http(s) URL',
    );
    expect(() => cacheKeyOf('a#b', undefined, single)).toThrow(UsageError);
    expect(cacheKeyOf('/a#b', undefined, single).key).toBe('/a');
  });

  it('refuses what the origin refuses, and paths outside the rendered ones', () => {
    expect(() => cacheKeyOf('/a/%2e%2e/b', undefined, single)).toThrow(UsageError);
    expect(() => cacheKeyOf('/docs/x', undefined, { ...single, renderPaths: ['/blog/*'] })).toThrow(
      /not one of the paths rendered here/,
    );
  });
});

describe('parseDuration', () => {
  it.each([
    ['90', 90],
    ['30s', 30],
    ['30m', 1_800],
    ['2h', 7_200],
    ['1d', 86_400],
  ])('reads %s as %d seconds', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(['', '0', '-5m', '2 weeks', '1.5h'])('refuses "%s"', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
