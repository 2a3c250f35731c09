/**
 * How long the local CloudFront keeps an answer. RFC 9111's arithmetic (a shared cache's
 * freshness lifetime from `s-maxage`, `max-age` or `Expires` against `Date`; the age from `Age`
 * and the time resident) is `http-cache-semantics`'. CloudFront's documented departures are
 * layered on it:
 * - TTLs ("Manage how long content stays in the cache (expiration)",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/Expiration.html): an
 *   answer stating a lifetime is kept for it, within the policy's Min and Max TTL; one stating
 *   none for the Default TTL (no heuristic freshness); `no-store`, `no-cache` or `private` keep
 *   it out of the cache when Min TTL is 0, and for Min TTL otherwise; `stale-while-revalidate` and
 *   `stale-if-error` are honoured. `Set-Cookie` does not stop CloudFront storing an answer.
 * - `Vary: *` with Min TTL 0: kept, but every request goes to the origin ("Request and response
 *   behavior for custom origins", Content negotiation,
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/RequestAndResponseBehaviorCustomOrigin.html).
 * - errors ("How CloudFront processes HTTP 4xx and 5xx status codes from your origin",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/HTTPStatusCodes.html and
 *   "Control how long CloudFront caches errors",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/custom-error-pages-expiration.html):
 *   404, 405, 414, 500, 501, 502, 503 and 504 are kept for the greater of the Error Caching
 *   Minimum TTL (10 s unless a custom error response sets it) and their stated lifetime, whatever
 *   other directive they carry; 400, 403, 412 and 415 only when they state `max-age` or
 *   `s-maxage`; other 4xx/5xx never.
 * - 3xx: 307 and 308 only with a `Cache-Control` header ("How CloudFront processes HTTP 3xx
 *   status codes from your origin",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/http-3xx-status-codes.html).
 */
import HttpCachePolicy from 'http-cache-semantics';
import type { Clock } from '../../lambda/core/clock.js';
import { cacheDirectives } from '../../lambda/core/traffic.js';
import type { CachePolicyConfig } from './config.js';

/** CloudFront's Error Caching Minimum TTL when no custom error response sets one. */
export const DEFAULT_ERROR_CACHING_MIN_TTL = 10;
const ALWAYS_CACHED_ERRORS = new Set([404, 405, 414, 500, 501, 502, 503, 504]);
const ERRORS_CACHED_WITH_MAX_AGE = new Set([400, 403, 412, 415]);

export interface EdgeFreshness {
  /** Seconds the answer is fresh at the edge. */
  readonly ttl: number;
  readonly staleWhileRevalidate: number;
  readonly staleIfError: number;
  /** Kept, but every request still goes to the origin (`Vary: *`). */
  readonly alwaysForward: boolean;
}

export type StoreVerdict =
  | { readonly store: true; readonly freshness: EdgeFreshness }
  | { readonly store: false; readonly reason: string };

/** `http-cache-semantics`' policy, telling time by the edge's clock. */
type EdgePolicyClass = new (
  ...args: ConstructorParameters<typeof HttpCachePolicy>
) => HttpCachePolicy;
const classes = new WeakMap<Pick<Clock, 'now'>, EdgePolicyClass>();
function policyClass(clock: Pick<Clock, 'now'>): EdgePolicyClass {
  let found = classes.get(clock);
  if (found === undefined) {
    found = class extends HttpCachePolicy {
      now(): number {
        return clock.now();
      }
    };
    classes.set(clock, found);
  }
  return found;
}

/** RFC 9111 §4.2.1: the lifetime an answer states for a shared cache, or undefined when none. */
function statedLifetime(
  headers: Readonly<Record<string, string>>,
  clock: Pick<Clock, 'now'>,
): number | undefined {
  const directives = cacheDirectives(headers['cache-control']);
  const stated =
    directives.has('s-maxage') || directives.has('max-age') || headers.expires !== undefined;
  if (!stated) return undefined;
  const explicit = ['s-maxage', 'max-age']
    .filter((name) => directives.has(name))
    .map((name) => `${name}=${directives.get(name)}`)
    .join(', ');
  const Policy = policyClass(clock);
  const lifetime = new Policy(
    { method: 'GET', headers: {} },
    {
      status: 200,
      headers: {
        ...(explicit === '' ? {} : { 'cache-control': explicit }),
        ...(headers.expires === undefined ? {} : { expires: headers.expires }),
        ...(headers.date === undefined ? {} : { date: headers.date }),
      },
    },
    { shared: true },
  ).maxAge();
  return Math.floor(lifetime);
}

const seconds = (directives: Map<string, string>, name: string): number => {
  const value = directives.get(name);
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : 0;
};

/** Whether and for how long CloudFront keeps an answer to a GET under `policy`. */
export function storeVerdict(
  status: number,
  headers: Readonly<Record<string, string>>,
  policy: CachePolicyConfig,
  errorCachingMinTtl: Readonly<Record<string, number>>,
  clock: Pick<Clock, 'now'>,
): StoreVerdict {
  const directives = cacheDirectives(headers['cache-control']);
  const stated = statedLifetime(headers, clock);
  const stale = {
    staleWhileRevalidate: seconds(directives, 'stale-while-revalidate'),
    staleIfError: seconds(directives, 'stale-if-error'),
    alwaysForward: false,
  };
  if (status >= 400) {
    const statesAge = directives.has('max-age') || directives.has('s-maxage');
    if (
      !ALWAYS_CACHED_ERRORS.has(status) &&
      !(ERRORS_CACHED_WITH_MAX_AGE.has(status) && statesAge)
    ) {
      return { store: false, reason: `CloudFront does not cache a ${status} like this one` };
    }
    const minimum = errorCachingMinTtl[String(status)] ?? DEFAULT_ERROR_CACHING_MIN_TTL;
    const ttl = Math.max(minimum, stated ?? 0);
    return ttl > 0
      ? { store: true, freshness: { ...stale, ttl } }
      : { store: false, reason: 'error caching minimum TTL 0' };
  }
  if ((status === 307 || status === 308) && headers['cache-control'] === undefined) {
    return { store: false, reason: `a ${status} without Cache-Control` };
  }
  if (status < 200 || status === 304) return { store: false, reason: `status ${status}` };
  const vetoed = ['no-store', 'no-cache', 'private'].find((name) => directives.has(name));
  if (vetoed !== undefined) {
    return policy.minTtl > 0
      ? { store: true, freshness: { ...stale, ttl: policy.minTtl } }
      : { store: false, reason: `${vetoed} with Min TTL 0` };
  }
  const ttl =
    stated === undefined
      ? Math.max(policy.minTtl, policy.defaultTtl)
      : Math.min(Math.max(stated, policy.minTtl), policy.maxTtl);
  const alwaysForward = policy.minTtl === 0 && (headers.vary ?? '').trim() === '*';
  if (ttl <= 0 && !alwaysForward) return { store: false, reason: 'TTL 0' };
  return { store: true, freshness: { ...stale, ttl, alwaysForward } };
}

/** A stored answer's age and staleness on the edge's clock (RFC 9111 §4.2.3 by the library). */
export class StoredAge {
  readonly #policy: HttpCachePolicy;

  constructor(freshness: EdgeFreshness, originAge: string | undefined, clock: Pick<Clock, 'now'>) {
    const Policy = policyClass(clock);
    this.#policy = new Policy(
      { method: 'GET', headers: {} },
      {
        status: 200,
        headers: {
          'cache-control': `public, s-maxage=${freshness.ttl}`,
          ...(originAge === undefined ? {} : { age: originAge }),
        },
      },
      { shared: true },
    );
  }

  /** Seconds since the origin made it (its own Age included), as CloudFront's `Age` says. */
  get seconds(): number {
    return Math.floor(this.#policy.age());
  }

  get fresh(): boolean {
    return !this.#policy.stale();
  }
}
