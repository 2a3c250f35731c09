/**
 * What serving is given: the origin request as the use case reads it, the origin's deps, and
 * the request's cache key under the service's tenancy. Apart from `serve.ts`, so the folder's
 * helpers (MISS, generation) import these without importing the entry that imports them.
 */
import { cacheKeyFor } from '../page/cache-key.js';
import type { HeaderPairs } from '../forwarding.js';
import type { CacheKey } from '../page/model.js';
import type { RegenerationCaller } from '../page/regeneration.js';
import type { PageStores, RegenerationQueue, TagPageCounter } from '../page/ports.js';
import type { InProgressReader } from '../page/in-progress.js';
import type { TrafficRules } from '../traffic-rules.js';
import type { PassDeps } from './pass.js';
import type { InRequestRegeneration } from './ports.js';
import type { CachingPolicy } from './responses.js';

/**
 * The origin's deps: the stores serving reads, and the regeneration a MISS runs, which the
 * origin's wiring passes in with its own ports (`regenerateInRequest`).
 */
export interface OriginDeps
  extends InRequestRegeneration, PassDeps, PageStores, RegenerationCaller {
  /** Counts a page's variants (`maxVariantsPerPage`); none are counted without it. */
  readonly tagIndex?: TagPageCounter | undefined;
  /**
   * Multi-tenant mode: the request header that names the tenant (set by the edge from `Host`),
   * and the tenants served. A request without a tenant, or with one not on the list, is refused;
   * answers vary on the header.
   */
  readonly tenancy?:
    { readonly header: string; readonly tenants?: readonly string[] | undefined } | undefined;
  readonly queue: RegenerationQueue;
  readonly deployId: string;
  readonly dedupeWindowSeconds: number;
  /** How long a miss waits for another holder's publish before answering 503. */
  readonly missWaitMs: number;
  readonly retryAfterSeconds: number;
  readonly caching: CachingPolicy;
  /** The header every page lists its CDN cache tags in (CloudFront's CacheTagConfig). */
  readonly cacheTagHeader: string;
  /**
   * A page served (with 503 and Retry-After) when every render slot is taken, if it is cached;
   * a plain 503 otherwise. A path, as a viewer would request it.
   */
  readonly overloadFallbackPath?: string | undefined;
  /**
   * Revalidations still marking in the background (`page/in-progress.ts`), read beside
   * META; absent: none are (every revalidation marks its pages before its 202).
   */
  readonly inProgress?: InProgressReader | undefined;
  /** Most variants a page keeps; a new one past it passes (`variantLimited`). @default none */
  readonly maxVariantsPerPage?: number | undefined;
  /**
   * The paths the edge routes past the cache (with an upstream): a key whose decoded path is one
   * of them is passed, never rendered (`routedPathReason`). @default none
   */
  readonly routing?: Pick<TrafficRules, 'bypassPaths' | 'staticPrefixes'> | undefined;
}

/** An origin request, as the use case needs it (never the Host header). */
export interface PageRequest {
  readonly method: string;
  readonly rawPath: string;
  readonly rawQueryString: string;
  /** The configured tenant header's value; ignored in single-tenant mode. */
  readonly tenant: string | undefined;
  readonly ifNoneMatch: string | undefined;
  readonly ifModifiedSince?: string | undefined;
  /** The request's headers, lower-case; only `keyPolicy.variants`' are read (page/variants.ts). */
  readonly variantHeaders?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * The viewer's headers (cookies included) and body: only a pass-through ever sends them on;
   * a render gets the cache key alone, so no viewer's session can enter the cache.
   */
  readonly headers?: HeaderPairs | undefined;
  readonly body?: Uint8Array | undefined;
}

/**
 * The request's cache key under the service's tenancy (`cacheKeyFor`); the tenant header is
 * read in multi-tenant mode only. @throws InvalidCacheKeyError
 */
export const cacheKeyOf = (deps: OriginDeps, request: PageRequest): CacheKey =>
  cacheKeyFor(
    deps.tenancy,
    {
      tenant: deps.tenancy === undefined ? undefined : request.tenant,
      rawPath: request.rawPath,
      rawQueryString: request.rawQueryString,
      variantHeaders: request.variantHeaders,
    },
    deps.keyPolicy,
  );
