/**
 * Which class a request belongs to, decided once for three consumers: the viewer-request
 * CloudFront Function, `npm start`'s front (which runs that function), and the origin (defence in
 * depth). The functions marked "embedded" are copied into the CloudFront Function by their own
 * source text (`EDGE_FUNCTIONS`), so they are written in the subset the CloudFront JavaScript
 * 2.0 runtime runs: one flat function each (no inner functions: a transpiler may name them), no
 * closures over this module, indexed loops, `indexOf`, string and boolean literals only.
 */

import { normalisedPathOf } from './edge-path.js';
import { keyRuleOf, type KeyRule } from './key-rules.js';
import { matchesPathPattern } from './path-patterns.js';

/** Where a request goes: the page cache, the upstream as it is, or the upstream's own assets. */
export const TrafficClass = { Cached: 'cached', Pass: 'pass', Static: 'static' } as const;
export type TrafficClass = (typeof TrafficClass)[keyof typeof TrafficClass];

/** Why a request is in its class: logged, and named in `Cache-Status` (`fwd=`). */
export const RequestReason = {
  /** A page: GET or HEAD, nothing that asks for the upstream. */
  Page: 'page',
  /** The service's own paths (`/_isr/`), never passed through. */
  Internal: 'internal',
  Method: 'method',
  StaticPrefix: 'static-prefix',
  BypassPath: 'bypass-path',
  BypassCookie: 'bypass-cookie',
  BypassHeader: 'bypass-header',
  UnknownQuery: 'unknown-query',
} as const;
export type RequestReason = (typeof RequestReason)[keyof typeof RequestReason];

/** What a query parameter outside `allowedQueryParams` does to a request. */
export const UnknownQuery = { Pass: 'pass', Drop: 'drop' } as const;
export type UnknownQuery = (typeof UnknownQuery)[keyof typeof UnknownQuery];

/** The service's own paths: never the upstream's, at the edge or locally. */
export const INTERNAL_PATH_PREFIX = '/_isr/';

/** The routing settings, as the CloudFront Function gets them (JSON) and the origin reads them. */
export interface TrafficRules {
  /** Path patterns: literal characters, and `**` for any characters (`/` included). */
  readonly bypassPaths: readonly string[];
  /** Cookie names (case-sensitive); present => pass. */
  readonly bypassCookies: readonly string[];
  /** Lower-case header names; present => pass. */
  readonly bypassHeaders: readonly string[];
  /** Path prefixes ending in `/`, routed to the upstream and never stored. */
  readonly staticPrefixes: readonly string[];
  /** Query parameters of the cache key. */
  readonly allowedQueryParams: readonly string[];
  readonly unknownQuery: UnknownQuery;
  /**
   * Query parameters neither keyed nor a reason to pass (Next.js's `_rsc` cache-buster): the
   * edge leaves them to the cache policy, which drops them. @default none
   */
  readonly ignoredQueryParams?: readonly string[] | undefined;
  /**
   * Paths keyed on their own parameters (`core/key-rules.ts`): any other parameter there is
   * dropped, never a reason to pass. @default none
   */
  readonly keyRules?: readonly KeyRule[] | undefined;
}

/** The parts of a request the rules read, from CloudFront's event or a function URL event alike. */
export interface RequestFacts {
  readonly method: string;
  /** The path as received (percent-encoded), without the query. */
  readonly path: string;
  /** Query parameter names as received (not decoded). */
  readonly queryNames: readonly string[];
  /** Lower-case header names. */
  readonly headerNames: readonly string[];
  readonly cookieNames: readonly string[];
}

export interface RequestDecision {
  readonly class: TrafficClass;
  readonly reason: RequestReason;
}

/**
 * The rule, in order: the service's own paths, methods other than GET/HEAD, static prefixes,
 * bypass paths, cookies and headers, then (with `unknownQuery: 'pass'`) a parameter outside the
 * allow-list. Paths are matched as CloudFront normalises them to pick a behaviour
 * (`edge-path.ts`), so the function and the behaviours agree. Embedded in the CloudFront Function.
 */
export function classifyRequest(facts: RequestFacts, rules: TrafficRules): RequestDecision {
  const path = normalisedPathOf(facts.path);
  if (path.indexOf('/_isr/') === 0) return { class: 'cached', reason: 'internal' };
  if (facts.method !== 'GET' && facts.method !== 'HEAD') {
    return { class: 'pass', reason: 'method' };
  }
  const routed = routedPathReason(rules, path);
  if (routed) return { class: routed === 'bypass-path' ? 'pass' : 'static', reason: routed };
  for (let i = 0; i < rules.bypassCookies.length; i++) {
    if (facts.cookieNames.indexOf(rules.bypassCookies[i]) >= 0) {
      return { class: 'pass', reason: 'bypass-cookie' };
    }
  }
  for (let i = 0; i < rules.bypassHeaders.length; i++) {
    if (facts.headerNames.indexOf(rules.bypassHeaders[i]) >= 0) {
      return { class: 'pass', reason: 'bypass-header' };
    }
  }
  if (keyRuleOf(rules.keyRules || [], path)) return { class: 'cached', reason: 'page' };
  if (rules.unknownQuery === 'pass') {
    const ignored = rules.ignoredQueryParams || [];
    for (let i = 0; i < facts.queryNames.length; i++) {
      const name = facts.queryNames[i];
      if (rules.allowedQueryParams.indexOf(name) < 0 && ignored.indexOf(name) < 0) {
        return { class: 'pass', reason: 'unknown-query' };
      }
    }
  }
  return { class: 'cached', reason: 'page' };
}

/**
 * Whether a path is one the edge routes past the cache (a static prefix, then a bypass path):
 * `classifyRequest`'s path rules, and the origin's check of a page's decoded path (its cache
 * key's): a spelling CloudFront does not normalise (an escaped reserved character such as `%2B`)
 * reaches the origin, whose key decodes it once, so the origin checks again before it renders.
 * Embedded.
 */
export function routedPathReason(
  rules: Pick<TrafficRules, 'bypassPaths' | 'staticPrefixes'>,
  path: string,
): 'static-prefix' | 'bypass-path' | undefined {
  for (let i = 0; i < rules.staticPrefixes.length; i++) {
    if (path.indexOf(rules.staticPrefixes[i]) === 0) return 'static-prefix';
  }
  for (let i = 0; i < rules.bypassPaths.length; i++) {
    if (matchesPathPattern(rules.bypassPaths[i], path)) return 'bypass-path';
  }
  return undefined;
}

/** A CloudFront Functions event's request, as far as the rules read it. */
export interface CloudFrontRequestShape {
  readonly method: string;
  readonly uri: string;
  readonly querystring?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly cookies?: Readonly<Record<string, unknown>>;
}

/** The facts of a CloudFront Functions request (names are its objects' keys). Embedded. */
export function factsOfCloudFrontRequest(request: CloudFrontRequestShape): RequestFacts {
  return {
    method: request.method,
    path: request.uri,
    queryNames: Object.keys(request.querystring || {}),
    headerNames: Object.keys(request.headers || {}),
    cookieNames: Object.keys(request.cookies || {}),
  };
}

/**
 * Framework and service headers a viewer must never send upstream: the service's own
 * (`x-isr-*`), Next.js's internal and on-demand revalidation headers (docs/notes on Next 16:
 * `x-prerender-revalidate` carries the preview id, which reads drafts and forces renders). The
 * edge strips them from every request; the origin strips them before a pass-through.
 */
export const PRIVILEGED_HEADERS: readonly string[] = [
  'x-prerender-revalidate',
  'x-prerender-revalidate-if-generated',
  'x-next-revalidated-tags',
  'x-next-revalidate-tag-token',
  'x-matched-path',
  'x-now-route-matches',
  'x-nextjs-data',
  'next-resume',
  'x-next-resume-state-length',
];
/** Prefixes of privileged headers (`x-middleware-subrequest` among them). */
export const PRIVILEGED_HEADER_PREFIXES: readonly string[] = [
  'x-isr-',
  'x-middleware-',
  'x-invoke-',
];

/** Whether a lower-case header name is privileged (see `PRIVILEGED_HEADERS`). Embedded. */
export function isPrivilegedHeader(
  name: string,
  exact: readonly string[],
  prefixes: readonly string[],
): boolean {
  if (exact.indexOf(name) >= 0) return true;
  for (let i = 0; i < prefixes.length; i++) {
    if (name.indexOf(prefixes[i]) === 0) return true;
  }
  return false;
}

/** The functions the CloudFront Function carries, by their own source text. */
export const EDGE_FUNCTIONS = [
  normalisedPathOf,
  classifyRequest,
  routedPathReason,
  matchesPathPattern,
  factsOfCloudFrontRequest,
  isPrivilegedHeader,
] as const;

/** A request as the origin sees it (a function URL event's parts). */
export interface HttpRequestParts {
  readonly method: string;
  readonly rawPath: string;
  readonly rawQueryString?: string | undefined;
  /** Header names in any case; a `cookie` header is read for cookie names. */
  readonly headers: Readonly<Record<string, unknown>>;
  /** Cookies as a function URL event lists them (`name=value`), besides any `cookie` header. */
  readonly cookies?: readonly string[] | undefined;
}

/** The facts of a request that reached the origin, named as the edge names them. */
export function requestFacts(request: HttpRequestParts): RequestFacts {
  const headerNames = Object.keys(request.headers).map((name) => name.toLowerCase());
  const cookieHeader = Object.entries(request.headers).find(
    ([name]) => name.toLowerCase() === 'cookie',
  )?.[1];
  const cookies = [
    ...(request.cookies ?? []),
    ...(typeof cookieHeader === 'string' ? cookieHeader.split(';') : []),
  ];
  return {
    method: request.method,
    path: request.rawPath,
    queryNames: (request.rawQueryString ?? '')
      .split('&')
      .filter((part) => part !== '')
      .map((part) => part.split('=')[0]),
    headerNames: headerNames.filter((name) => name !== 'cookie'),
    cookieNames: cookies.map((cookie) => cookie.split('=')[0].trim()).filter((name) => name !== ''),
  };
}

/** The rules out of whatever holds them under their own names (a config's settings, the construct's). */
export const toTrafficRules = (settings: TrafficRules): TrafficRules => ({
  bypassPaths: settings.bypassPaths,
  bypassCookies: settings.bypassCookies,
  bypassHeaders: settings.bypassHeaders,
  staticPrefixes: settings.staticPrefixes,
  allowedQueryParams: settings.allowedQueryParams,
  unknownQuery: settings.unknownQuery,
  ...(settings.ignoredQueryParams?.length
    ? { ignoredQueryParams: settings.ignoredQueryParams }
    : {}),
  ...(settings.keyRules?.length ? { keyRules: settings.keyRules } : {}),
});
