/**
 * A published generation as a viewer's answer: from META alone where it can (304, HEAD), else
 * with its body; and the configured fallback page a MISS is given when every render slot is taken.
 */
import { varyOf } from '../page/variants.js';
import type { CacheKey, CacheMeta } from '../page/model.js';
import { cdnTagsOfPage } from '../page/cache-tags.js';
import { epochSeconds } from '../clock.js';
import { BodyNotFoundError } from '../errors.js';
import type { StoredBody } from '../page/ports.js';
import { ServeDecision } from './decision.js';
import {
  CacheStatus,
  generationHeaders,
  isNotModified,
  type AnswerShape,
  type PageResponse,
} from './responses.js';
import { cacheKeyOf, type OriginDeps, type PageRequest } from './request.js';

/**
 * A published generation as a response; undefined when its body is missing from the bucket.
 * A 304 and a HEAD are answered from META alone, unless META does not say the page's status and
 * content type (a row FaceTheory or TableTheory wrote): its object's metadata says them, so the
 * object is read first.
 */
export async function serveGeneration(
  deps: OriginDeps,
  cacheKey: CacheKey,
  meta: CacheMeta,
  request: PageRequest,
  cacheStatus: CacheStatus,
): Promise<PageResponse | undefined> {
  const read = () =>
    deps.bodies.getBody(meta.s3Key).catch((error: unknown) => {
      if (error instanceof BodyNotFoundError) return undefined;
      throw error;
    });
  let page = meta;
  let stored: StoredBody | undefined;
  if (!describesItself(meta)) {
    stored = await read();
    if (stored === undefined) return undefined;
    page = withObjectMetadata(meta, stored);
  }
  const status = page.statusCode ?? 200;
  const decision = cacheStatus === CacheStatus.Stale ? ServeDecision.Stale : ServeDecision.Fresh;
  const base = { decision, cacheStatus, cacheKeyHash: undefined };
  const headersOf = (shape: AnswerShape) =>
    generationHeaders(page, cacheStatus, epochSeconds(deps.clock), deps.caching, {
      vary: varyOf(deps.tenancy?.header, deps.keyPolicy.variants, cacheKey.variant),
      cacheTags: { header: deps.cacheTagHeader, tags: cdnTagsOfPage(cacheKey, page.tags) },
      ...shape,
    });
  if (status < 300 && isNotModified(request, page, deps.clock.now())) {
    const headers = headersOf({ notModified: true });
    return { ...base, headers, decision: ServeDecision.NotModified, status: 304, body: undefined };
  }
  if (request.method === 'HEAD') {
    const headers = headersOf({ contentLength: stored?.body.byteLength ?? page.contentLength });
    return { ...base, headers, status, body: undefined };
  }
  stored ??= await read();
  if (stored === undefined) return undefined;
  const headers = headersOf({ contentLength: stored.body.byteLength });
  return { ...base, headers, status, body: stored.body };
}

/** Whether META alone says how to serve the page (rows written here always do). */
const describesItself = (meta: CacheMeta): boolean =>
  meta.statusCode !== undefined && meta.contentType !== undefined;

/** META completed from the object's FaceTheory metadata, where META is silent. */
function withObjectMetadata(meta: CacheMeta, stored: StoredBody): CacheMeta {
  if (describesItself(meta) && meta.contentLength !== undefined) return meta;
  const csp = stored.metadata.contentSecurityPolicy;
  return {
    ...meta,
    statusCode: meta.statusCode ?? stored.metadata.status,
    contentType: meta.contentType ?? stored.metadata.contentType ?? stored.contentType,
    headers: meta.headers ?? (csp === undefined ? undefined : { 'content-security-policy': csp }),
    contentLength: meta.contentLength ?? stored.body.byteLength,
  };
}

/** The configured fallback page, as a 503 nobody caches; undefined when it is not cached. */
export async function overloadFallback(
  deps: OriginDeps,
  request: PageRequest,
): Promise<PageResponse | undefined> {
  if (deps.overloadFallbackPath === undefined) return undefined;
  try {
    const key = cacheKeyOf(deps, {
      ...request,
      rawPath: deps.overloadFallbackPath,
      rawQueryString: '',
    });
    const meta = await deps.cacheTable.getMeta(key.pk);
    if (meta === undefined) return undefined;
    const served = await serveGeneration(
      deps,
      key,
      meta,
      { ...request, ifNoneMatch: undefined, ifModifiedSince: undefined },
      CacheStatus.Hit,
    );
    if (served === undefined) return undefined;
    // Not the page asked for, and not for keeping: no validator, cache status or cache tags.
    const dropped = new Set(['etag', 'x-isr-cache', deps.cacheTagHeader]);
    const headers = Object.fromEntries(
      Object.entries(served.headers).filter(([name]) => !dropped.has(name)),
    );
    return {
      ...served,
      status: 503,
      headers: {
        ...headers,
        'cache-control': 'no-store',
        'retry-after': String(deps.retryAfterSeconds),
      },
      decision: ServeDecision.Overloaded,
      cacheStatus: undefined,
    };
  } catch {
    return undefined;
  }
}
