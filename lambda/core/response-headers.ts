/**
 * Which upstream response headers a cached page keeps, in one place. A page must reach the
 * viewer as the upstream meant it: its Content-Security-Policy, HSTS, Link preloads and robots
 * directives are stored with the generation and replayed on every answer. An allow-list decides
 * (exact names, or a prefix ending in `*`); hop-by-hop headers and those the service sets itself
 * are never kept, whatever the list says; `Set-Cookie` has its own rule (see render-policy.ts).
 */
import { RefusalReason, RenderRefusedError } from './errors.js';
import { HOP_BY_HOP_HEADERS } from './forwarding.js';

/** What happens to a page that sets a cookie: cached without it, or not cached at all. */
export const SetCookiePolicy = { Strip: 'strip', Refuse: 'refuse' } as const;
export type SetCookiePolicy = (typeof SetCookiePolicy)[keyof typeof SetCookiePolicy];

export const DEFAULT_KEPT_HEADERS: readonly string[] = [
  'content-security-policy',
  'content-security-policy-report-only',
  'strict-transport-security',
  'x-frame-options',
  'x-content-type-options',
  'referrer-policy',
  'permissions-policy',
  'cross-origin-*',
  'link',
  'content-language',
  'x-robots-tag',
];

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
]);

/** Representation metadata a 304 should not carry (RFC 9110 §15.4.5). */
const NOT_ON_304 = new Set(['content-language', 'link']);

export interface HeaderPolicy {
  /** Names to keep; `cross-origin-*` keeps every name starting with `cross-origin-`. */
  readonly keep: readonly string[];
  readonly maxBytes: number;
}

export const DEFAULT_HEADER_POLICY: HeaderPolicy = {
  keep: DEFAULT_KEPT_HEADERS,
  maxBytes: DEFAULT_KEPT_HEADERS_MAX_BYTES,
};

/** A header name the allow-list may hold: lower-case token, or a prefix ending in `*`. */
export const KEPT_HEADER_PATTERN = /^[a-z0-9-]+\*?$/;

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
  const kept: Record<string, string> = {};
  let bytes = 0;
  for (const [rawName, value] of Object.entries(upstream)) {
    const name = rawName.toLowerCase();
    if (NEVER_KEPT.has(name) || name.startsWith('x-isr-') || declaredHopByHop.has(name)) continue;
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
