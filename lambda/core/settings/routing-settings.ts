/**
 * The request side of the traffic rules (`lambda/core/traffic-rules.ts`): which requests the
 * edge routes to the upstream instead of the page cache. The construct turns them into
 * CloudFront behaviours and the viewer-request function; `npm start`'s front runs that function;
 * the origin classifies by them again (defence in depth). A value that would make a behaviour
 * CloudFront refuses, or a pattern reaching the service's own `/_isr/` paths, is refused at synth
 * and at cold start alike.
 */
import {
  INTERNAL_PATH_PREFIX,
  isPrivilegedHeader,
  PRIVILEGED_HEADER_PREFIXES,
  PRIVILEGED_HEADERS,
  UnknownQuery,
} from '../traffic-rules.js';
import { eachEntry, headerProblems, list, oneOf } from './define.js';
import type { Reader } from './spec.js';

/** The origin classifies again; `npm start` runs the function; the construct builds the edge. */
const ROUTING: readonly Reader[] = ['origin', 'local', 'deploy'];
/** CloudFront's quotas on one cache policy: cookies, headers (and query strings) in its key. */
export const MAX_CACHE_KEY_COOKIES = 10;
export const MAX_CACHE_KEY_HEADERS = 10;
/** CloudFront's path patterns are at most 255 characters. */
const MAX_PATH_PATTERN_LENGTH = 255;
/** The characters CloudFront accepts in a behaviour's path pattern (besides `*`). */
const PATH_PATTERN_CHARACTERS = /^\/[A-Za-z0-9_\-.$/~'@:+&]*$/;
/** A cookie name: an RFC 6265 token. */
const COOKIE_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

const trim = (item: string): string => item.trim();
const lower = (item: string): string => item.trim().toLowerCase();

/** Whether some path under `/_isr/` could match a pattern whose literal start is `literal`. */
const reachesInternal = (literal: string, wildcard: boolean): boolean =>
  literal.startsWith(INTERNAL_PATH_PREFIX) ||
  (wildcard && INTERNAL_PATH_PREFIX.startsWith(literal));

/** Why a static prefix cannot be a behaviour, as a sentence; none when it can. */
function staticPrefixProblem(prefix: string): string | undefined {
  if (!PATH_PATTERN_CHARACTERS.test(prefix) || !prefix.endsWith('/') || prefix === '/') {
    return 'must be a path prefix starting and ending with "/" (not "/" alone), of letters, digits and _-.$~\'@:+&';
  }
  if (prefix.length + 1 > MAX_PATH_PATTERN_LENGTH)
    return 'is longer than a CloudFront path pattern';
  if (reachesInternal(prefix, true))
    return `would route the service's own ${INTERNAL_PATH_PREFIX} paths`;
  return undefined;
}

/** Why a bypass path cannot be a behaviour, as a sentence; none when it can. */
function bypassPathProblem(pattern: string): string | undefined {
  const literal = pattern.replace(/\*\*/g, '');
  if (!PATH_PATTERN_CHARACTERS.test(literal) || pattern.includes('***')) {
    return 'must be a path starting with "/" of letters, digits and _-.$~\'@:+&, with ** for any characters (a single * cannot be a behaviour)';
  }
  if (pattern.replace(/\*\*/g, '*').length > MAX_PATH_PATTERN_LENGTH) {
    return 'is longer than a CloudFront path pattern';
  }
  const wildcard = pattern.indexOf('**');
  const start = wildcard < 0 ? pattern : pattern.slice(0, wildcard);
  if (reachesInternal(start, wildcard >= 0))
    return `would route the service's own ${INTERNAL_PATH_PREFIX} paths`;
  return undefined;
}

/** Problems of each entry, one sentence per entry refused. */
const each =
  (problemOf: (entry: string) => string | undefined) =>
  (entries: readonly string[], name: string): string[] =>
    entries.flatMap((entry) => {
      const problem = problemOf(entry);
      return problem === undefined ? [] : [`${name} entry ${JSON.stringify(entry)} ${problem}`];
    });

const atMost =
  (max: number, why: string) =>
  (entries: readonly string[], name: string): string[] =>
    entries.length <= max ? [] : [`${name} names ${entries.length}, at most ${max} (${why})`];

export const ROUTING_SETTINGS = {
  /**
   * Path prefixes of the upstream's immutable assets (Next.js `/_next/static/`, Astro `/_astro/`,
   * SvelteKit `/_app/immutable/`, Nuxt `/_nuxt/`): each is a CloudFront behaviour to the
   * upstream with the upstream's own Cache-Control, so these requests never reach the origin
   * function and nothing of them is stored in the table or bucket. Needs `renderOriginUrl`.
   * @default [] - none
   * @bounds path prefixes starting and ending with `/`, not `/` alone, not reaching `/_isr/`
   */
  staticPrefixes: list('ISR_STATIC_PREFIXES', 'prop', ROUTING, [], trim, true, {
    check: each(staticPrefixProblem),
  }),
  /**
   * Paths always passed through to the upstream (`/api/**`): `**` matches any characters, `/`
   * included; anything else is literal. Each is a CloudFront behaviour to the upstream that
   * caches nothing and forwards the viewer's method, headers, cookies, query and body. Needs
   * `renderOriginUrl`.
   * @default [] - none
   * @bounds paths starting with `/`, `**` as the only wildcard, not reaching `/_isr/`
   */
  bypassPaths: list('ISR_BYPASS_PATHS', 'prop', ROUTING, [], trim, true, {
    check: each(bypassPathProblem),
  }),
  /**
   * Cookies whose presence sends a request to the upstream as it is (a preview or draft
   * session, e.g. Next.js `__prerender_bypass`). The edge gives such a request a cache key of its
   * own, so a viewer holding one never gets the public cached copy, nor leaves one. Needs
   * `renderOriginUrl`.
   * @default [] - none
   * @bounds at most 10 cookie names (RFC 6265 tokens)
   */
  bypassCookies: list('ISR_BYPASS_COOKIES', 'prop', ROUTING, [], trim, true, {
    check: (cookies, name) => [
      ...eachEntry((cookie) => COOKIE_NAME.test(cookie), 'is not a cookie name')(cookies, name),
      ...atMost(MAX_CACHE_KEY_COOKIES, "CloudFront's cookies per cache policy")(cookies, name),
    ],
  }),
  /**
   * Request headers whose presence sends a request to the upstream as it is, with a cache key
   * of its own at the edge (never the public copy). Needs `renderOriginUrl`.
   * @default [] - none
   * @bounds lower-case header names, not privileged (`x-isr-*`, Next.js internals), not `cookie`;
   * with the tenant header, at most 10
   */
  bypassHeaders: list('ISR_BYPASS_HEADERS', 'prop', ROUTING, [], lower, true, {
    check: (headers, name) => [
      ...headers.flatMap((header) => headerProblems(`${name} entry`, header)),
      ...eachEntry(
        (header) =>
          header !== 'cookie' &&
          !/^(x-amz-|x-edge-)/.test(header) &&
          !isPrivilegedHeader(header, PRIVILEGED_HEADERS, PRIVILEGED_HEADER_PREFIXES),
        'is stripped at the edge or cannot be keyed on (cookie, x-amz-*, x-edge-*, privileged headers)',
      )(headers, name),
      ...atMost(MAX_CACHE_KEY_HEADERS, "CloudFront's headers per cache policy")(headers, name),
    ],
  }),
  /**
   * A query parameter outside `allowedQueryParams`: `pass` sends the request to the upstream as
   * it is (pagination, search and islands keep working; the page cache is left alone, so random
   * parameters cost the upstream, never the table); `drop` removes the parameter at the edge
   * and serves the page from the cache (the upstream never sees it).
   * @default 'pass'
   */
  unknownQuery: oneOf('ISR_UNKNOWN_QUERY', 'prop', ROUTING, Object.values(UnknownQuery), 'pass'),
  /**
   * Query parameters that neither select a page nor send a request to the upstream: dropped
   * from the key and the render like any parameter outside `allowedQueryParams`, never a reason
   * to pass (Next.js's `_rsc` cache-buster: a viewer's value is never part of a key).
   * @default [] - none
   * @bounds names without spaces, `,`, `&`, `=` or `#`; not in `allowedQueryParams`
   */
  ignoredQueryParams: list('ISR_IGNORED_QUERY_PARAMS', 'prop', ROUTING, [], trim, true, {
    check: eachEntry((param) => /^[^\s,&=#]+$/.test(param), 'is not a query parameter name'),
  }),
};
