/**
 * Which upstream response headers a cached page keeps, in one place. A page must reach the
 * viewer as the upstream meant it (issue 34, point 5): every header it sends (its CSP, HSTS,
 * Link preloads, a `headers()` rule's or middleware's own) is stored with the generation and
 * replayed on every answer, but for a stated deny-list (`NEVER_KEPT`: hop-by-hop headers, what
 * the service sets itself, internal tag and framework headers, `Set-Cookie`, which has its own
 * rule in render-policy.ts). An allow-list (exact names, or a prefix ending in `*`) can narrow it.
 */
import { RefusalReason, RenderRefusedError } from './errors.js';
import { HOP_BY_HOP_HEADERS } from './forwarding.js';

/** What happens to a page that sets a cookie: cached without it, or not cached at all. */
export const SetCookiePolicy = { Strip: 'strip', Refuse: 'refuse' } as const;
export type SetCookiePolicy = (typeof SetCookiePolicy)[keyof typeof SetCookiePolicy];

/** Every header the upstream sends, but those never kept. */
export const DEFAULT_KEPT_HEADERS: readonly string[] = ['*'];

/** Largest total of kept names and values, in bytes: beyond it the page is refused, not trimmed. */
export const DEFAULT_KEPT_HEADERS_MAX_BYTES = 16 * 1024;

/** Hop-by-hop (RFC 9110 §7.6.1) and what the service sets, or must not replay, itself. */
const NEVER_KEPT = new Set([
  ...HOP_BY_HOP_HEADERS,
  'cache-control',
  'etag',
  'last-modified',
  'content-type',
  'content-length',
  'content-encoding',
  'content-range',
  'accept-ranges',
  'vary',
  'age',
  'date',
  'expires',
  'location',
  'set-cookie',
  'retry-after',
  // The service's own cache state (and RFC 9211's), never an upstream's stale copy of one.
  'cache-status',
  'x-cache',
  'x-nextjs-cache',
  // Internal tag headers: the upstream's default and Next's (the configured ones: `internal`).
  'cache-tag',
  'x-next-cache-tags',
]);

/** Prefixes never kept: the service's own headers, and Next's middleware internals. */
const NEVER_KEPT_PREFIXES = ['x-isr-', 'x-middleware-'];

/** Representation metadata a 304 should not carry (RFC 9110 §15.4.5). */
const NOT_ON_304 = new Set(['content-language', 'link']);

export interface HeaderPolicy {
  /** Names to keep; `cross-origin-*` keeps every name starting with `cross-origin-`; `*` all. */
  readonly keep: readonly string[];
  readonly maxBytes: number;
  /** Headers only the service reads (the upstream tag header, the CDN's cache tag header). */
  readonly internal?: InternalHeaders | undefined;
}

/**
 * Headers only the service reads: never kept with a page, never shown to a viewer. The config
 * gives them as a set built once (`internalHeaderSet`); a list is lower-cased into one per call.
 */
export type InternalHeaders = readonly string[] | ReadonlySet<string>;

/** The lower-case set of `names`: itself when it is one already. */
export const internalHeaderSet = (names: InternalHeaders = []): ReadonlySet<string> =>
  names instanceof Set ? names : new Set([...names].map((name) => name.toLowerCase()));

/** Header pairs without the internal ones: what a viewer may be shown of an answer. */
export function withoutInternalHeaders<Pair extends readonly [string, string]>(
  headers: readonly Pair[],
  internal: InternalHeaders | undefined,
): Pair[] {
  const dropped = internalHeaderSet(internal);
  return headers.filter(([name]) => !dropped.has(name.toLowerCase()));
}

export const DEFAULT_HEADER_POLICY: HeaderPolicy = {
  keep: DEFAULT_KEPT_HEADERS,
  maxBytes: DEFAULT_KEPT_HEADERS_MAX_BYTES,
};

/** A header name the allow-list may hold: lower-case token, a prefix ending in `*`, or `*`. */
export const KEPT_HEADER_PATTERN = /^(\*|[a-z0-9-]+\*?)$/;

/**
 * The headers of `upstream` (lower-case names) the page keeps.
 * @throws RenderRefusedError when the kept headers are over `maxBytes`: a page whose security
 * headers cannot be kept is not served without them.
 */
export function keptHeaders(
  upstream: Readonly<Record<string, string>> | undefined,
  policy: HeaderPolicy,
): Record<string, string> | undefined {
  if (upstream === undefined) return undefined;
  const declaredHopByHop = new Set(
    (upstream.connection ?? '').split(',').map((name) => name.trim().toLowerCase()),
  );
  const internal = internalHeaderSet(policy.internal);
  const kept: Record<string, string> = {};
  let bytes = 0;
  for (const [rawName, value] of Object.entries(upstream)) {
    const name = rawName.toLowerCase();
    if (isNeverKept(name) || internal.has(name) || declaredHopByHop.has(name)) continue;
    if (!policy.keep.some((entry) => matches(entry, name))) continue;
    kept[name] = value;
    bytes += name.length + value.length;
  }
  if (bytes > policy.maxBytes) {
    throw new RenderRefusedError(
      RefusalReason.HeadersTooLarge,
      `the kept response headers take ${bytes} bytes, over the ${policy.maxBytes}-byte limit`,
    );
  }
  return Object.keys(kept).length === 0 ? undefined : kept;
}

/** The kept headers a 304 repeats: not the representation's own metadata. */
export const headersFor304 = (kept: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(kept).filter(([name]) => !NOT_ON_304.has(name)));

const matches = (entry: string, name: string): boolean =>
  entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : entry === name;

/** Whether a header is on the deny-list, whatever the allow-list says. */
const isNeverKept = (name: string): boolean =>
  NEVER_KEPT.has(name) || NEVER_KEPT_PREFIXES.some((prefix) => name.startsWith(prefix));
