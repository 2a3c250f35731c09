import { describe, expect, it } from '@jest/globals';
import {
  MAX_CACHE_KEY_LENGTH,
  MAX_RAW_QUERY_LENGTH,
  cacheKeyFor,
  normaliseCacheKey,
  sha256Hex,
  tenantFor,
  type CacheKeyPolicy,
  type Tenancy,
} from '../../../../lambda/core/page/cache-key.js';
import { InvalidCacheKeyError, InvalidKeyReason } from '../../../../lambda/core/errors.js';

const policy: CacheKeyPolicy = { allowedQueryParams: ['page', 'lang', 'tag'] };
const keyOf = (rawPath: string, rawQueryString = '', tenant?: string) =>
  normaliseCacheKey({ rawPath, rawQueryString, tenant }, policy);

const reasonOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    if (error instanceof InvalidCacheKeyError) return error.reason;
    throw error;
  }
};

describe('normaliseCacheKey', () => {
  it('builds the FaceTheory pk from the sha256 hex of the canonical key', () => {
    const key = keyOf('/blog/post', 'page=2');
    expect(key.key).toBe('/blog/post?page=2');
    expect(key.hash).toBe(sha256Hex('/blog/post?page=2'));
    expect(key.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.pk).toBe(`CACHE#${key.hash}`);
  });

  it('puts the tenant at the front of the pk in multi-tenant mode', () => {
    const key = keyOf('/a', '', 'acme');
    expect(key.pk).toBe(`TENANT#acme#CACHE#${sha256Hex('/a')}`);
    expect(keyOf('/a', '', 'other').pk).not.toBe(key.pk);
  });

  it.each([
    ['slashes collapse and a trailing slash is dropped', '/blog//post/', '', '/blog/post'],
    ['the root stays the root', '/', '', '/'],
    [
      'allow-listed params are sorted by name then value',
      '/a',
      'tag=b&page=1&tag=a',
      '/a?page=1&tag=a&tag=b',
    ],
    ['unknown params are dropped', '/a', 'utm_source=x&page=1&fbclid=y', '/a?page=1'],
    ['"+" in the query is a space', '/a', 'tag=a+b', '/a?tag=a%20b'],
    ['values are decoded once and re-encoded canonically', '/a', 'tag=%61', '/a?tag=a'],
    ['an encoded and a literal path character are one key', '/caf%C3%A9', '', '/caf%C3%A9'],
    ['composed and decomposed unicode are one key', '/cafe%CC%81', '', '/caf%C3%A9'],
    ['RFC 3986 path characters stay readable', '/a:b@c', '', '/a:b@c'],
  ])('normalises: %s', (_label, rawPath, query, expected) => {
    expect(keyOf(rawPath, query).key).toBe(expected);
  });

  it.each([
    ['/../etc/passwd', InvalidKeyReason.Traversal],
    ['/a/./b', InvalidKeyReason.Traversal],
    ['/a/%2e%2e/b', InvalidKeyReason.EncodedDot],
    ['/a/%2E/b', InvalidKeyReason.EncodedDot],
    ['/a%2fb', InvalidKeyReason.EncodedSeparator],
    ['/a\\b', InvalidKeyReason.Backslash],
    ['/a%5cb', InvalidKeyReason.Backslash],
    ['/a/%252e%252e/b', InvalidKeyReason.DoubleEncoding],
    ['/a%00b', InvalidKeyReason.ControlCharacter],
    ['/a%0d%0aSet-Cookie:x', InvalidKeyReason.ControlCharacter],
    ['/a%c2%85b', InvalidKeyReason.ControlCharacter],
    ['/a%ff', InvalidKeyReason.MalformedEncoding],
    ['/a%e0%80', InvalidKeyReason.MalformedEncoding],
    ['/\uff0e\uff0e/secret', InvalidKeyReason.Traversal],
    ['relative/path', InvalidKeyReason.InvalidPath],
  ])('rejects %j as %s', (rawPath, reason) => {
    expect(reasonOf(() => keyOf(rawPath))).toBe(reason);
  });

  it('rejects a path over the length limit, before and after decoding', () => {
    expect(reasonOf(() => keyOf(`/${'a'.repeat(MAX_CACHE_KEY_LENGTH)}`))).toBe(
      InvalidKeyReason.TooLong,
    );
    expect(reasonOf(() => keyOf(`/${'%C3%A9'.repeat(MAX_CACHE_KEY_LENGTH)}`))).toBe(
      InvalidKeyReason.TooLong,
    );
  });

  it('rejects control characters and bad encoding in allow-listed query values only', () => {
    expect(reasonOf(() => keyOf('/a', 'page=%00'))).toBe(InvalidKeyReason.ControlCharacter);
    expect(reasonOf(() => keyOf('/a', 'page=%zz'))).toBe(InvalidKeyReason.MalformedEncoding);
    expect(keyOf('/a', 'ignored=%zz').key).toBe('/a');
  });

  it('holds only what the key keeps to the length limit: long ignored parameters are dropped', () => {
    const tracking = `utm_content=${'x'.repeat(4 * MAX_CACHE_KEY_LENGTH)}`;
    expect(keyOf('/list', `${tracking}&page=2`).key).toBe('/list?page=2');
    expect(reasonOf(() => keyOf('/list', `page=${'9'.repeat(MAX_CACHE_KEY_LENGTH)}`))).toBe(
      InvalidKeyReason.TooLong,
    );
    expect(reasonOf(() => keyOf('/list', `x=${'y'.repeat(MAX_RAW_QUERY_LENGTH)}`))).toBe(
      InvalidKeyReason.TooLong,
    );
  });

  it('counts the query towards the length limit', () => {
    const almost = `/${'a'.repeat(MAX_CACHE_KEY_LENGTH - 10)}`;
    expect(keyOf(almost).key).toBe(almost);
    expect(reasonOf(() => keyOf(almost, 'page=123456789'))).toBe(InvalidKeyReason.TooLong);
  });

  it.each([
    '',
    'a#b',
    'a/b',
    '-lead',
    `${'x'.repeat(65)} (65 chars)`.slice(0, 65),
    'tenant with space',
  ])('rejects tenant %j', (tenant) => {
    expect(reasonOf(() => keyOf('/a', '', tenant))).toBe(InvalidKeyReason.InvalidTenant);
  });
});

describe('the tenancy rule (cacheKeyFor)', () => {
  const policy = { allowedQueryParams: [] };
  const key = (tenancy: Tenancy | undefined, tenant: string | undefined, rawPath = '/a') =>
    cacheKeyFor(tenancy, { tenant, rawPath }, policy);
  const reasonOf = (run: () => unknown) => {
    try {
      run();
      return 'accepted';
    } catch (error) {
      return error instanceof InvalidCacheKeyError ? error.reason : 'other';
    }
  };

  it('keys a single-tenant page without a tenant, and refuses a tenant named there', () => {
    expect(key(undefined, undefined).pk).toMatch(/^CACHE#/);
    expect(reasonOf(() => key(undefined, 'acme'))).toBe('unexpected-tenant');
    expect(reasonOf(() => key(undefined, ''))).toBe('unexpected-tenant');
  });

  it('requires a well-formed tenant in multi-tenant mode, and one served when listed', () => {
    const open = {};
    const listed = { tenants: ['acme'] };
    expect(key(open, 'globex').pk).toMatch(/^TENANT#globex#CACHE#/);
    expect(key(listed, 'acme').pk).toMatch(/^TENANT#acme#CACHE#/);
    expect(reasonOf(() => key(open, undefined))).toBe('missing-tenant');
    expect(reasonOf(() => key(open, ''))).toBe('missing-tenant');
    expect(reasonOf(() => key(open, 'acme#CACHE#x'))).toBe('invalid-tenant');
    expect(reasonOf(() => key(listed, 'globex'))).toBe('unknown-tenant');
    expect(tenantFor(listed, 'acme')).toBe('acme');
  });

  it('judges the tenant before the path', () => {
    expect(reasonOf(() => key({ tenants: ['acme'] }, 'globex', '/a/../b'))).toBe('unknown-tenant');
    expect(reasonOf(() => key({ tenants: ['acme'] }, 'acme', '/a/../b'))).toBe('traversal');
  });
});
