import { secondsUntilStale } from '../page/freshness.js';
import type { CacheMeta } from '../page/model.js';
import { formatHttpDate, parseHttpDate } from './http-date.js';
import { headersFor304 } from '../response-headers.js';
import type { ServeDecision } from './decision.js';

export const CacheStatus = { Hit: 'HIT', Stale: 'STALE', Miss: 'MISS', Pass: 'PASS' } as const;
export type CacheStatus = (typeof CacheStatus)[keyof typeof CacheStatus];
/** `x-isr-cache` of an answer the upstream gave the viewer as it was (pass-through, static). */
export const PASS = CacheStatus.Pass;

/** This cache's name in RFC 9211 `Cache-Status` (other caches on the path add their own). */
export const CACHE_STATUS_NAME = 'facetheory-isr';

/** An RFC 9211 `Cache-Status` entry: `hit`, or `fwd=` why the request went on, `ttl=`, `detail=`. */
export function cacheStatusHeader(entry: {
  readonly hit?: boolean;
  readonly fwd?: string | undefined;
  readonly ttl?: number | undefined;
  readonly detail?: string | undefined;
}): string {
  const parts = [CACHE_STATUS_NAME];
  if (entry.hit === true) parts.push('hit');
  if (entry.fwd !== undefined) parts.push(`fwd=${entry.fwd}`);
  if (entry.ttl !== undefined) parts.push(`ttl=${entry.ttl}`);
  if (entry.detail !== undefined) parts.push(`detail=${entry.detail}`);
  return parts.join('; ');
}

/** The `Cache-Status` of a generation served HIT, STALE or MISS, with the freshness left. */
const generationCacheStatus = (cacheStatus: CacheStatus, ttl: number): string =>
  cacheStatus === CacheStatus.Hit
    ? cacheStatusHeader({ hit: true, ttl })
    : cacheStatusHeader({ fwd: cacheStatus === CacheStatus.Stale ? 'stale' : 'miss', ttl });

/** How long shared caches may keep what the origin serves. */
export interface CachingPolicy {
  /** `s-maxage` of a stale response: short, so the regenerated page replaces it soon. */
  readonly staleSharedMaxAge: number;
  readonly staleWhileRevalidateSeconds: number;
  readonly staleIfErrorSeconds: number;
  /** Say the state in `x-nextjs-cache` too (the `nextjs` preset). @default false */
  readonly nextCacheHeader?: boolean | undefined;
}

export interface PageResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array | undefined;
  /**
   * A streamed pass's body, sent as the upstream sends it (`body` is then undefined): only ever
   * a pass-through's, with `PassDeps.streamPasses`.
   */
  readonly stream?: AsyncIterable<Uint8Array> | undefined;
  /** `Set-Cookie` values, one per cookie: only ever a pass-through's (a stored page has none). */
  readonly cookies?: readonly string[] | undefined;
  /** What was decided, for the log line and the metrics: fresh, stale, new, a 4xx reason... */
  readonly decision: ServeDecision;
  /** How a page was served (HIT, STALE, MISS, PASS); undefined for an error answer. */
  readonly cacheStatus?: CacheStatus | undefined;
  readonly cacheKeyHash: string | undefined;
  /**
   * The log line's idempotency key, where the use case has one: a queued intent's deduplication
   * id (STALE), the in-request regeneration's version id (MISS); the handler's request id else.
   */
  readonly idempotencyKey?: string | undefined;
  readonly detail?: Record<string, unknown> | undefined;
}

/** What an answer adds to a generation's own headers. */
export interface AnswerShape {
  /** A 304: only what a revalidation may repeat. */
  readonly notModified?: boolean;
  /** Bytes of the body sent (or that GET would send, for HEAD). */
  readonly contentLength?: number | undefined;
  /** The request header the page varies on (the tenant header in multi-tenant mode). */
  readonly vary?: string | undefined;
  /** The page's CDN cache tags and the header they go in (a purge by tag reaches them). */
  readonly cacheTags?: { readonly header: string; readonly tags: readonly string[] } | undefined;
}

/**
 * Headers of a published generation: the upstream's kept headers (CSP, HSTS, Link...), then the
 * service's own, which win. `Cache-Control` uses delta-seconds only, which CloudFront honours:
 * `s-maxage` is the freshness left (short when stale); browsers revalidate with the validators.
 */
export function generationHeaders(
  meta: CacheMeta,
  cacheStatus: CacheStatus,
  nowSeconds: number,
  policy: CachingPolicy,
  shape: AnswerShape = {},
): Record<string, string> {
  const sharedMaxAge =
    cacheStatus === CacheStatus.Stale
      ? staleSharedMaxAge(meta, nowSeconds, policy)
      : secondsUntilStale(meta, nowSeconds);
  const kept = meta.headers ?? {};
  const headers: Record<string, string> = {
    ...(shape.notModified === true ? headersFor304(kept) : kept),
    'cache-control': [
      'public',
      'max-age=0',
      `s-maxage=${sharedMaxAge}`,
      `stale-while-revalidate=${policy.staleWhileRevalidateSeconds}`,
      `stale-if-error=${policy.staleIfErrorSeconds}`,
    ].join(', '),
    'last-modified': formatHttpDate(lastModifiedOf(meta)),
    'x-isr-cache': cacheStatus,
    'cache-status': generationCacheStatus(cacheStatus, secondsUntilStale(meta, nowSeconds)),
  };
  // Next's own values are the same words (HIT, STALE, MISS).
  if (policy.nextCacheHeader === true) headers['x-nextjs-cache'] = cacheStatus;
  if (shape.notModified !== true) {
    // A body-less redirect gets no made-up type (the renderer's default when the upstream sent none).
    const type = meta.contentType ?? OCTET_STREAM;
    const bodyless =
      meta.location !== undefined && (shape.contentLength ?? meta.contentLength) === 0;
    if (!(bodyless && type === OCTET_STREAM)) headers['content-type'] = type;
    if (shape.contentLength !== undefined) headers['content-length'] = String(shape.contentLength);
    if (meta.location !== undefined) headers.location = meta.location;
  }
  if (meta.etag !== undefined) headers.etag = meta.etag;
  if (shape.vary !== undefined) headers.vary = shape.vary;
  if (shape.cacheTags !== undefined)
    headers[shape.cacheTags.header] = shape.cacheTags.tags.join(',');
  return headers;
}

const OCTET_STREAM = 'application/octet-stream';

/**
 * Whether a conditional request is answered 304 (RFC 9110 §13.2.2): If-None-Match decides when
 * present (weak comparison); otherwise If-Modified-Since against the generation's time. Both from
 * META alone.
 */
export function isNotModified(
  request: {
    readonly ifNoneMatch?: string | undefined;
    readonly ifModifiedSince?: string | undefined;
  },
  meta: CacheMeta,
  nowMs: number,
): boolean {
  if (request.ifNoneMatch !== undefined) return etagMatches(request.ifNoneMatch, meta.etag);
  const since = modifiedSince(request.ifModifiedSince, nowMs);
  return since !== undefined && lastModifiedOf(meta) * 1000 <= since;
}

/** When the page's content last changed: an unchanged render moves its freshness, not this. */
const lastModifiedOf = (meta: CacheMeta): number => meta.modifiedAt ?? meta.generatedAt;

/**
 * The If-Modified-Since that counts: an HTTP-date (RFC 9110 §13.1.3 says to ignore anything
 * else) no later than now. A date in the future is ignored too: no Last-Modified we sent can be
 * one, and honouring it would tell a cache its copy is current for every generation until then.
 */
function modifiedSince(text: string | undefined, nowMs: number): number | undefined {
  const since = text === undefined ? undefined : parseHttpDate(text, nowMs);
  return since !== undefined && since <= nowMs ? since : undefined;
}

/** Longest a shared cache keeps a stale page whose regeneration is backing off. */
export const MAX_BACKOFF_SHARED_MAX_AGE = 300;

/**
 * A stale page is kept briefly, so the regenerated one replaces it soon; while its regeneration
 * is backing off after failures, nothing will replace it before the next attempt, so the CDN
 * may keep it until then (bounded), which spares the origin the stale hits of a broken page.
 */
function staleSharedMaxAge(meta: CacheMeta, nowSeconds: number, policy: CachingPolicy): number {
  const wait = meta.failures === undefined ? 0 : meta.failures.nextAttemptAt - nowSeconds;
  return Math.max(policy.staleSharedMaxAge, Math.min(wait, MAX_BACKOFF_SHARED_MAX_AGE));
}

/** A refusal with its reason as JSON, never cached: the reason is what serving decided. */
export function errorResponse(
  status: number,
  reason: ServeDecision,
  message: string,
  extraHeaders: Record<string, string> = {},
): PageResponse {
  return { ...jsonError(status, reason, message, extraHeaders), decision: reason };
}

/** The JSON error answer itself (`{ error, message }`, never cached), whatever was decided. */
export function jsonError(
  status: number,
  error: string,
  message: string,
  extraHeaders: Record<string, string> = {},
): Omit<PageResponse, 'decision'> {
  return {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...extraHeaders },
    body: new TextEncoder().encode(JSON.stringify({ error, message })),
    cacheKeyHash: undefined,
  };
}

/** If-None-Match with the weak comparison RFC 9110 asks for: `*`, lists and `W/` prefixes. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (ifNoneMatch === undefined || etag === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch
    .split(',')
    .some((candidate) => candidate.trim() === '*' || opaque(candidate) === opaque(etag));
}
