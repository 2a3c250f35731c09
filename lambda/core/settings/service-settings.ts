/**
 * Settings of the page cache itself, read by the functions that render, serve or revalidate
 * pages. Each entry's TSDoc is the construct prop's documentation and a row of
 * docs/SETTINGS.md (`npm run settings:doc`); `@default` is checked against the value.
 */
import { keyRuleProblems, MAX_KEY_RULES, parseKeyRules } from '../key-rules.js';
import { compilePathPatterns } from '../path-patterns.js';
import { DEFAULT_KEPT_HEADERS, KEPT_HEADER_PATTERN, SetCookiePolicy } from '../response-headers.js';
import { BODY_KEY_PREFIX, TENANT_PATTERN } from '../page/rows.js';
import { isPlainOrigin, parseTenantOrigins, tenantOriginProblems } from '../tenant-origins.js';
import { parseVariantRules, VariantParam, variantRuleProblems } from '../page/variants.js';
import { eachEntry, flag, header, int, json, list, oneOf, text } from './define.js';
import { MAX_BODY_BYTES, MAX_KEPT_VERSIONS, MAX_REVALIDATE_SECONDS } from './limits.js';
import { PAGE_FUNCTIONS, type Reader } from './spec.js';

/**
 * What every function of the page cache reads: all but the purger, which reads the few settings
 * of a CDN purge (its queue, the table its pending purges wait in, the distribution).
 */
export const ALL: readonly Reader[] = PAGE_FUNCTIONS;
/** What every function reads, and the construct too (its CloudFront, IAM or queues use it). */
const ALL_AND_DEPLOY: readonly Reader[] = [...ALL, 'deploy'];

const trim = (item: string): string => item.trim();
const lower = (item: string): string => item.trim().toLowerCase();

/**
 * Tenants equal but for case, one sentence per group. Each keeps its own `pk` (FaceTheory
 * derives it from the tenant as given), but CloudFront compares cache tags case-insensitively.
 */
function caseTwins(tenants: readonly string[], name: string): string[] {
  const groups = new Map<string, string[]>();
  for (const tenant of tenants) {
    groups.set(tenant.toLowerCase(), [...(groups.get(tenant.toLowerCase()) ?? []), tenant]);
  }
  return [...groups.values()]
    .filter((group) => group.length > 1)
    .map(
      (group) =>
        `${name} ${group.map((tenant) => JSON.stringify(tenant)).join(', ')} differ only in case: ` +
        'CloudFront compares cache tags without case, so a purge in one would reach the others',
    );
}

export const SERVICE_SETTINGS = {
  /**
   * Upstream SSR origin pages are rendered from. https only; plain http is refused except for
   * loopback hosts (localhost, 127.0.0.0/8, ::1) and local mode.
   * @default - the built-in demo renderer
   * @bounds a URL: https, or http on a loopback host or in local mode; no credentials
   */
  renderOriginUrl: text('RENDER_ORIGIN_URL', 'prop', ALL, undefined),
  /**
   * The origin viewers use (`https://www.example.com`): renders and passes tell the upstream
   * its host and scheme in `X-Forwarded-Host` and `X-Forwarded-Proto` (a viewer's own copies
   * are never sent on), so the app builds absolute URLs with it. In multi-tenant mode
   * `tenantOrigins` says each tenant's instead.
   * @default - renders name no host; passes name the one the edge saw
   * @bounds an http(s) origin: scheme and host (and port), no path, query or credentials
   */
  publicOrigin: text('ISR_PUBLIC_ORIGIN', 'prop', ALL, undefined, {
    check: (origin, name) =>
      isPlainOrigin(origin)
        ? []
        : [`${name} ${JSON.stringify(origin)} must be an http(s) origin alone`],
  }),
  /**
   * Multi-tenant mode: each tenant's public origin (`{"acme":"https://acme.example.com"}`). A
   * tenant's renders and passes tell the upstream its host and scheme in `X-Forwarded-Host` and
   * `X-Forwarded-Proto`; a tenant not in it gets none (never another tenant's or a viewer's).
   * @default - from `tenantsByHost`: each tenant's first host in the table, over https
   * @bounds tenant names (as `tenants`) to http(s) origins alone: no path, query or credentials;
   * within the origin's and worker's 4 KB of environment (synth says when not)
   */
  tenantOrigins: json(
    'ISR_TENANT_ORIGINS',
    'prop',
    ['origin', 'worker'],
    undefined,
    parseTenantOrigins,
    {
      requires: { tenantHeader: 'multi-tenant mode' },
      check: tenantOriginProblems,
    },
  ),
  /**
   * Query parameters that are part of the cache key. CloudFront caches on and forwards only
   * these; every other parameter is dropped at the edge.
   * @default [] - no query string reaches the origin
   * @bounds names without spaces, `,`, `&`, `=` or `#`
   */
  allowedQueryParams: list('ISR_ALLOWED_QUERY_PARAMS', 'prop', ALL_AND_DEPLOY, [], trim, true, {
    check: eachEntry((param) => /^[^\s,&=#]+$/.test(param), 'is not a query parameter name'),
  }),
  /**
   * Path patterns that may be rendered at all (`/blog/*` within a segment, `/docs/**` across);
   * any other path is a 404 that costs no read, render or row. Turn it on when the site's paths
   * are known, so a crawler looping over random URLs cannot fill the cache.
   * @default [] - every path may be rendered
   * @bounds path globs starting with `/`
   */
  renderPaths: list('ISR_RENDER_PATHS', 'prop', ALL, [], trim, false, {
    check: (patterns, name) =>
      patterns.flatMap((pattern) => {
        try {
          compilePathPatterns([pattern]);
          return [];
        } catch (error) {
          return [`${name}: ${(error as Error).message}`];
        }
      }),
  }),
  /**
   * Upstream response headers kept with a page and replayed to viewers (exact names, a prefix
   * ending in `*`, or `*` for every one). Never kept, whatever the list: `Set-Cookie`, hop-by-hop
   * headers, the service's own cache headers, internal tag headers (`NEVER_KEPT`).
   * @default ['*'] - every header but those
   * @bounds lower-case names, a prefix ending in `*`, or `*`; never `set-cookie`
   */
  keptHeaders: list('ISR_KEPT_HEADERS', 'prop', ALL, DEFAULT_KEPT_HEADERS, lower, false, {
    check: eachEntry(
      (entry) => KEPT_HEADER_PATTERN.test(entry) && !entry.startsWith('set-cookie'),
      'must be a lower-case header name, a prefix ending in "*" or "*", never set-cookie',
    ),
  }),
  /**
   * Whether a page's answer also says its state (HIT, STALE, MISS) in `x-nextjs-cache`, for
   * tools that read Next's header; `Cache-Status` and `x-isr-cache` say it always. The
   * `nextjs` preset turns it on.
   * @default false
   */
  nextCacheHeader: flag('ISR_NEXT_CACHE_HEADER', 'prop', ['origin'], false),
  /**
   * A page that sets a cookie: `strip` caches it without the cookie (logged), as CloudFront
   * does when cookies are not in the cache key; `refuse` does not cache it at all (502).
   * @default 'strip'
   */
  setCookie: oneOf('ISR_SET_COOKIE', 'prop', ALL, Object.values(SetCookiePolicy), 'strip'),
  /**
   * Key prefix of page bodies in the bucket; the functions' object permissions and the
   * lifecycle rule are scoped to it. Set it to the prefix another writer (FaceTheory) uses to
   * share its bodies.
   * @default 'pages/'
   * @bounds path segments of letters, digits and `!_.'()-`, ending in `/`
   */
  bodyKeyPrefix: text('ISR_BODY_PREFIX', 'prop', ALL_AND_DEPLOY, BODY_KEY_PREFIX, {
    check: (prefix, name) =>
      /^[A-Za-z0-9!_.'()-]+(\/[A-Za-z0-9!_.'()-]+)*\/$/.test(prefix)
        ? []
        : [
            `${name} ${JSON.stringify(prefix)} must be path segments of letters, digits and !_.'()- ending in "/"`,
          ],
  }),
  /**
   * The response header the origin lists a page's cache tags in; CloudFront's CacheTagConfig
   * reads it (a purge by tag uses it) and a response headers policy removes it for viewers.
   * @default 'x-isr-cache-tags'
   */
  cacheTagHeader: header('ISR_CACHE_TAG_HEADER', 'prop', ALL_AND_DEPLOY, 'x-isr-cache-tags'),
  /**
   * The upstream response header a page's tags come from, comma-separated.
   * @default 'cache-tag'
   */
  upstreamTagHeader: header('ISR_UPSTREAM_TAG_HEADER', 'prop', ALL, 'cache-tag'),
  /**
   * Request header that names the tenant. Setting it turns on multi-tenant mode: the header is
   * part of the cache key and a request without it is refused.
   * @default - single-tenant
   */
  tenantHeader: header('ISR_TENANT_HEADER', 'prop', ALL_AND_DEPLOY, undefined),
  /**
   * Tenants served in multi-tenant mode; needs `tenantHeader`. Each is a name the cache key
   * accepts (1-64 of `A-Za-z0-9._-`, starting alphanumeric). Set but naming nobody is refused
   * (fail closed), never read as "any tenant". Two that differ only in case are refused: their
   * keys differ, but CloudFront's tags are case-insensitive, so one's purge would reach the other.
   * @default - any well-formed tenant
   * @bounds at least one; each 1-64 of `A-Za-z0-9._-`, starting alphanumeric; no two equal but for case
   */
  tenants: list('ISR_TENANTS', 'prop', ALL_AND_DEPLOY, undefined, trim, true, {
    requires: { tenantHeader: 'multi-tenant mode' },
    check: (tenants, name) => [
      ...(tenants.length === 0 ? [`${name} must name at least one tenant`] : []),
      ...eachEntry(
        (tenant) => TENANT_PATTERN.test(tenant),
        'must be 1-64 characters of A-Z, a-z, 0-9, ".", "_" or "-", starting alphanumeric',
      )(tenants, name),
      ...caseTwins(tenants, name),
    ],
  }),
  /**
   * Request headers that select a representation of a page (Next.js RSC payloads): each
   * variant is its own cache entry, its render gets those headers (no other of the viewer's),
   * answers carry `Vary` for them and the CDN keys on them. A value outside its bounds is a 400
   * (`variant-out-of-bounds`), never a new entry. JSON: `[{"name":"rsc","values":["1"]},
   * {"name":"next-router-segment-prefetch","charset":"A-Za-z0-9_\\-@$!/","maxLength":256}]`.
   * @default [] - no variants
   * @bounds at most 8; each a lower-case header name with exactly one of `values` (visible
   * ASCII) or `charset` (a character class body), `maxLength` 1..256
   */
  variantHeaders: json('ISR_VARIANT_HEADERS', 'prop', ALL_AND_DEPLOY, [], parseVariantRules, {
    check: (rules, name) => [
      ...rules.flatMap((rule) => variantRuleProblems(rule, `${name} entry`)),
      ...(rules.length > 8 ? [`${name} names at most 8 headers`] : []),
    ],
  }),
  /**
   * Paths whose cache key is their own (Next.js's image optimizer): named query parameters,
   * each required and bounded (`path`: a site-relative path, `int`: an integer), any other
   * parameter dropped, and with `accept: "image"` the Accept header normalised to AVIF, WebP or
   * other. Out of bounds: a 400 (`query-out-of-bounds`) at the edge and the origin; an absolute
   * URL passes to the upstream. Each is a CloudFront behaviour keyed on exactly those.
   * JSON: `[{"path":"/_next/image","params":[{"name":"w","kind":"int","max":8192}],"accept":"image"}]`.
   * @default [] - none
   * @bounds at most 4; 1-10 params each, `int` bounds 0..1e9, `path` max 4096
   */
  keyRules: json('ISR_KEY_RULES', 'prop', ALL_AND_DEPLOY, [], parseKeyRules, {
    check: (rules, name) => [
      ...rules.flatMap((rule) => keyRuleProblems(rule, `${name} entry`)),
      ...(rules.length > MAX_KEY_RULES ? [`${name} names at most ${MAX_KEY_RULES} rules`] : []),
    ],
  }),
  /**
   * What a variant's render adds to the upstream request: `next-rsc` the `_rsc` parameter Next.js
   * checks RSC requests against (computed from the variant's headers, as its client does).
   * @default 'none'
   */
  variantParam: oneOf('ISR_VARIANT_PARAM', 'prop', ALL, Object.values(VariantParam), 'none'),
  /**
   * Bump when rendering changes, so intents of the old deploy never dedupe new ones.
   * @default 'unversioned'
   * @bounds 1 to 128 characters
   */
  deployId: text('ISR_DEPLOY_ID', 'prop', ALL, 'unversioned', {
    local: 'local',
    check: (id, name) => (id.length <= 128 ? [] : [`${name} must be 1 to 128 characters`]),
  }),
  /**
   * Freshness of a page that does not ask for its own.
   * @default 60
   */
  revalidateSeconds: int('ISR_REVALIDATE_SECONDS', 'prop', ALL, 60, 1, MAX_REVALIDATE_SECONDS, {
    local: 10,
  }),
  /**
   * Regeneration lease; must be longer than `renderTimeoutMs` and `clockSkewMarginSeconds`.
   * @default 30
   */
  leaseSeconds: int('ISR_LEASE_SECONDS', 'prop', ALL, 30, 2),
  /**
   * Largest clock difference assumed between two functions: a render starts only while the lease
   * has more than this left, so nobody else can have taken it over yet. Below `leaseSeconds`.
   * @default 2
   * @bounds and below the lease
   */
  clockSkewMarginSeconds: int('ISR_CLOCK_SKEW_MARGIN_SECONDS', 'prop', ALL, 2, 0),
  /**
   * Longest render; below the lease, and leaving room in both function timeouts.
   * @default 10_000
   * @bounds and below the lease
   */
  renderTimeoutMs: int('ISR_RENDER_TIMEOUT_MS', 'prop', ALL, 10_000, 1, 900_000),
  /**
   * Largest body published; at most 4 MiB, so a base64 body fits a function URL response.
   * @default 4_194_304 (4 MiB)
   */
  maxBodyBytes: int('ISR_MAX_BODY_BYTES', 'prop', ALL, MAX_BODY_BYTES, 1, MAX_BODY_BYTES, {
    why: 'base64 must fit a 6 MB function URL reply',
  }),
  /**
   * How long a page nobody asks for is kept after it goes stale, before DynamoDB TTL may
   * collect its rows (the sweeper then retires its body). A requested page is regenerated,
   * which moves this forward.
   * @default 604_800 (7 days)
   */
  metaTtlSeconds: int('ISR_META_TTL_SECONDS', 'prop', ALL, 7 * 86_400, 1),
  /**
   * The same for a 404 or 410 page, kept briefly so random paths do not fill the table.
   * @default 3_600
   */
  goneTtlSeconds: int('ISR_GONE_TTL_SECONDS', 'prop', ALL, 3_600, 1),
  /**
   * Largest body of a 404 or 410, at a path never published, kept whole in one row
   * (`META#GONE`): no body object and no version row, so a flood of random paths costs one small
   * row each. A larger one is stored as a page (META, a version row, a body). 0 stores every
   * 404 as a page.
   * @default 4_096
   * @bounds 0..16384 (the row stays small: at most 17 WCU to write, 5 RCU to read)
   */
  goneInlineMaxBytes: int('ISR_GONE_INLINE_MAX_BYTES', 'prop', ALL, 4_096, 0, 16_384),
  /**
   * Versions of each page kept for `isr rollback` (VER# rows and their bodies), the live one
   * included; older ones are deleted as new ones are published. Each publish writes one more row
   * in its transaction.
   * @default 5
   */
  keepVersions: int('ISR_KEEP_VERSIONS', 'prop', ALL, 5, 2, MAX_KEPT_VERSIONS, {
    why: 'the page before the live one is always kept; META lists every kept version',
  }),
};
