import { createHash } from 'node:crypto';
import { InvalidCacheKeyError, InvalidKeyReason } from '../errors.js';
import type { CacheKey } from './model.js';
import type { PathMatcher } from '../path-patterns.js';
import { keyParamsVerdict, keyRuleOf, normalisedAcceptOf, type KeyRule } from '../key-rules.js';
import { partitionKey, TENANT_PATTERN } from './rows.js';
import { normaliseVariant, VARIANT_SEPARATOR, type VariantRule } from './variants.js';

/** Longest normalised cache key (path plus canonical query) accepted, in characters. */
export const MAX_CACHE_KEY_LENGTH = 1024;
/**
 * Longest raw query string read at all. Generous on purpose: parameters outside the allow-list
 * are dropped, so only what the key keeps is held to `maxKeyLength` (CloudFront itself refuses
 * URLs over 8,192 bytes).
 */
export const MAX_RAW_QUERY_LENGTH = 16 * 1024;

// C0 controls, DEL and C1 controls: never part of a page address.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/;
const ENCODED_SLASH = /%2f/i;
const ENCODED_BACKSLASH = /%5c/i;
const ENCODED_DOT = /%2e/i;

/** What the cache key depends on besides the path: which query parameters, how long a key. */
export interface CacheKeyPolicy {
  /** Query parameters that select a different page; every other parameter is dropped. */
  readonly allowedQueryParams: readonly string[];
  /** @default MAX_CACHE_KEY_LENGTH */
  readonly maxKeyLength?: number;
  /**
   * The paths that may be rendered at all (`compilePathPatterns`); any other path names no
   * cache entry, so a crawler's random paths cost no read, render or row.
   * @default every path
   */
  readonly renderable?: PathMatcher | undefined;
  /** Headers that select a representation of a page (`core/page/variants.ts`). @default none */
  readonly variants?: readonly VariantRule[] | undefined;
  /** Paths keyed on their own parameters and Accept instead (`core/key-rules.ts`). @default none */
  readonly keyRules?: readonly KeyRule[] | undefined;
}

export interface CacheKeyInput {
  readonly tenant?: string | undefined;
  /** The path as received (still percent-encoded), e.g. a function URL event's `rawPath`. */
  readonly rawPath: string;
  /** The query string as received, without `?`. */
  readonly rawQueryString?: string | undefined;
  /** The request's headers (lower-case names); only the policy's variant headers are read. */
  readonly variantHeaders?: Readonly<Record<string, string | undefined>> | undefined;
}

const reject = (reason: InvalidKeyReason, message: string): never => {
  throw new InvalidCacheKeyError(reason, message);
};

/**
 * Turns a request into its cache key, decoding exactly once and rejecting anything that could
 * alias another entry or escape the path (traversal, encoded separators, control characters).
 * Equivalent requests (segment slashes, unicode composition, parameter order, unknown parameters)
 * get the same key.
 */
export function normaliseCacheKey(input: CacheKeyInput, policy: CacheKeyPolicy): CacheKey {
  const maxKeyLength = policy.maxKeyLength ?? MAX_CACHE_KEY_LENGTH;
  const tenant = validateTenant(input.tenant);
  const path = normalisePath(input.rawPath, maxKeyLength);
  if (policy.renderable !== undefined && !policy.renderable(path)) {
    reject(InvalidKeyReason.PathNotRenderable, `${path} is not one of the paths rendered here`);
  }
  const rule = keyRuleOf(policy.keyRules ?? [], path);
  const query =
    rule === null
      ? normaliseQuery(input.rawQueryString ?? '', policy.allowedQueryParams)
      : keyRuleQuery(rule, input.rawQueryString ?? '');
  const pageKey = query ? `${path}?${query}` : path;
  if (pageKey.length > maxKeyLength) {
    reject(InvalidKeyReason.TooLong, `cache key is longer than ${maxKeyLength} characters`);
  }
  const pageHash = sha256Hex(pageKey);
  const variant =
    rule === null
      ? normaliseVariant(input.variantHeaders, policy.variants ?? [])
      : rule.accept === 'image'
        ? `accept=${encodeURIComponent(normalisedAcceptOf(input.variantHeaders?.accept))}`
        : '';
  if (variant === '') {
    return {
      tenant,
      path,
      query,
      key: pageKey,
      hash: pageHash,
      pk: partitionKey(tenant, pageHash),
    };
  }
  // A variant's key is derived from its page's: '#' never appears in a canonical path or query.
  const key = `${pageKey}${VARIANT_SEPARATOR}${variant}`;
  const hash = sha256Hex(key);
  return { tenant, path, query, key, hash, pk: partitionKey(tenant, hash), variant, pageHash };
}

/**
 * The service's tenancy. Single-tenant (undefined): no request names a tenant. Multi-tenant: every
 * request names one, well-formed, and, when `tenants` is set, one of those served here.
 */
export interface Tenancy {
  readonly tenants?: readonly string[] | undefined;
}

/**
 * The tenancy rule, in one place: the tenant a request's entry belongs to under `tenancy`.
 * @throws InvalidCacheKeyError (`unexpected-tenant`, `missing-tenant`, `invalid-tenant`,
 * `unknown-tenant`); each caller words the refusal for its own audience
 */
export function tenantFor(
  tenancy: Tenancy | undefined,
  tenant: string | undefined,
): string | undefined {
  if (tenancy === undefined) {
    if (tenant === undefined) return undefined;
    return reject(
      InvalidKeyReason.UnexpectedTenant,
      'this service is single-tenant: name no tenant',
    );
  }
  if (!tenant) return reject(InvalidKeyReason.MissingTenant, 'the tenant header is required');
  validateTenant(tenant);
  if (tenancy.tenants !== undefined && !tenancy.tenants.includes(tenant)) {
    reject(InvalidKeyReason.UnknownTenant, 'this tenant is not served here');
  }
  return tenant;
}

/**
 * A request's cache key under the service's tenancy: `tenantFor`, then `normaliseCacheKey`.
 * What the origin, the revalidate endpoint and the operator's CLI all key a page by.
 * @throws InvalidCacheKeyError
 */
export const cacheKeyFor = (
  tenancy: Tenancy | undefined,
  input: CacheKeyInput,
  policy: CacheKeyPolicy,
): CacheKey => normaliseCacheKey({ ...input, tenant: tenantFor(tenancy, input.tenant) }, policy);

export const sha256Hex = (value: string): string =>
  createHash('sha256').update(value, 'utf8').digest('hex');

function validateTenant(tenant: string | undefined): string | undefined {
  if (tenant === undefined) return undefined;
  if (!TENANT_PATTERN.test(tenant)) {
    reject(
      InvalidKeyReason.InvalidTenant,
      'tenant must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-", starting alphanumeric',
    );
  }
  return tenant;
}

function normalisePath(rawPath: string, maxKeyLength: number): string {
  // Cheap bound before any decoding work: an encoded character is at most 3 raw characters each.
  if (rawPath.length > maxKeyLength * 3) {
    reject(InvalidKeyReason.TooLong, `path is longer than ${maxKeyLength * 3} characters`);
  }
  if (!rawPath.startsWith('/')) reject(InvalidKeyReason.InvalidPath, 'path must start with "/"');
  if (rawPath.includes('\\') || ENCODED_BACKSLASH.test(rawPath)) {
    reject(InvalidKeyReason.Backslash, 'path must not contain a backslash');
  }
  if (ENCODED_SLASH.test(rawPath)) {
    reject(InvalidKeyReason.EncodedSeparator, 'path must not contain an encoded "/"');
  }
  if (ENCODED_DOT.test(rawPath)) {
    reject(InvalidKeyReason.EncodedDot, 'path must not contain an encoded "."');
  }
  const segments: string[] = [];
  for (const rawSegment of rawPath.split('/')) {
    if (rawSegment === '') continue; // '//' and a trailing '/' name the same page
    const segment = decodeComponent(rawSegment, 'path').normalize('NFC');
    if (segment === '.' || segment === '..' || aliasesTraversal(segment)) {
      reject(InvalidKeyReason.Traversal, 'path must not contain "." or ".." segments');
    }
    segments.push(encodePathSegment(segment));
  }
  return `/${segments.join('/')}`;
}

/** Compatibility forms (fullwidth dots and solidus) that some later system might fold. */
function aliasesTraversal(segment: string): boolean {
  const folded = segment.normalize('NFKC');
  if (folded === segment) return false;
  return folded === '.' || folded === '..' || /[/\\]/.test(folded);
}

function normaliseQuery(rawQuery: string, allowed: readonly string[]): string {
  if (rawQuery === '' || allowed.length === 0) return '';
  if (rawQuery.length > MAX_RAW_QUERY_LENGTH) {
    reject(InvalidKeyReason.TooLong, `query is longer than ${MAX_RAW_QUERY_LENGTH} characters`);
  }
  const pairs: [string, string][] = [];
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const rawValue = eq === -1 ? '' : part.slice(eq + 1);
    const name = decodeComponent(rawName.replaceAll('+', ' '), 'query');
    if (!allowed.includes(name)) continue;
    const value = decodeComponent(rawValue.replaceAll('+', ' '), 'query').normalize('NFC');
    pairs.push([name, value]);
  }
  pairs.sort(([an, av], [bn, bv]) => compare(an, bn) || compare(av, bv));
  return pairs
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
}

/**
 * A key rule's canonical query: its parameters only, each once and within its bounds.
 * @throws InvalidCacheKeyError (`query-out-of-bounds`)
 */
function keyRuleQuery(rule: KeyRule, rawQuery: string): string {
  const query = normaliseQuery(
    rawQuery,
    rule.params.map((param) => param.name),
  );
  const pairs = query.split('&').filter((pair) => pair !== '');
  const values: Record<string, string> = {};
  for (const pair of pairs) {
    const [name, value] = pair.split('=').map(decodeURIComponent);
    if (values[name] !== undefined)
      reject(InvalidKeyReason.QueryOutOfBounds, `${name} is repeated`);
    values[name] = value ?? '';
  }
  const verdict = keyParamsVerdict(rule, values);
  if (verdict === 'pass') {
    reject(
      InvalidKeyReason.QueryOutOfBounds,
      'an absolute url is passed to the upstream at the edge',
    );
  }
  if (verdict !== '') reject(InvalidKeyReason.QueryOutOfBounds, verdict);
  return query;
}

/** Percent-encodes a segment, leaving RFC 3986 path characters (sub-delims, ':' and '@') readable. */
const encodePathSegment = (segment: string): string =>
  encodeURIComponent(segment).replace(
    /%(21|24|26|27|28|29|2A|2B|2C|3A|3B|3D|40)/g,
    (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)),
  );

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Decodes once; anything still looking encoded afterwards was encoded twice. */
function decodeComponent(raw: string, where: 'path' | 'query'): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return reject(InvalidKeyReason.MalformedEncoding, `${where} has malformed percent-encoding`);
  }
  if (!decoded.isWellFormed()) {
    reject(InvalidKeyReason.MalformedEncoding, `${where} is not well-formed unicode`);
  }
  if (CONTROL_CHARACTER.test(decoded)) {
    reject(InvalidKeyReason.ControlCharacter, `${where} must not contain control characters`);
  }
  if (PERCENT_ESCAPE.test(decoded)) {
    reject(InvalidKeyReason.DoubleEncoding, `${where} must not be percent-encoded twice`);
  }
  return decoded;
}

/**
 * Whether a redirect's `Location` maps to `cacheKey` itself (a trailing slash, a parameter the
 * key drops): cached, such a redirect would be served for its own target, forever. A Location on
 * another host never does; one that is not a valid key does not either.
 */
export function isOwnKeyOf(cacheKey: CacheKey): (location: string) => boolean {
  const params = new Set(cacheKey.query.split('&').map((pair) => pair.split('=')[0] ?? ''));
  return (location) => {
    const base = 'http://own.invalid';
    let target: URL;
    try {
      target = new URL(location, `${base}${cacheKey.path}`);
    } catch {
      return false;
    }
    if (target.origin !== base) return false;
    try {
      const mapped = normaliseCacheKey(
        {
          rawPath: target.pathname,
          rawQueryString: target.search.slice(1),
          tenant: cacheKey.tenant,
        },
        { allowedQueryParams: [...params].filter((name) => name !== '') },
      );
      return mapped.key === cacheKey.key;
    } catch {
      return false;
    }
  };
}
