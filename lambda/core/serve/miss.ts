/**
 * A MISS: the page rendered in the request under the same lease and publish protocol as the
 * worker, or, while another holder renders it, that holder's publish waited for (bounded).
 */
import { varyOf } from '../page/variants.js';
import type { CacheKey, CacheMeta } from '../page/model.js';
import { cdnTagsOfPage } from '../page/cache-tags.js';
import { epochSeconds } from '../clock.js';
import { isAnswered, type Need } from '../page/freshness.js';
import { ServeDecision } from './decision.js';
import { serveGeneration } from './generation.js';
import { servePass } from './pass.js';
import { CacheStatus, errorResponse, generationHeaders, type PageResponse } from './responses.js';
import type { OriginDeps, PageRequest } from './request.js';

/**
 * Renders in the request. When another holder is already rendering, waits (bounded) for its
 * publish, then serves whatever answers the viewer (`isAnswered` with a `page` need).
 */
export async function serveMiss(
  deps: OriginDeps,
  cacheKey: CacheKey,
  request: PageRequest,
  need: Extract<Need, { kind: 'page' }>,
): Promise<PageResponse> {
  const outcome = await deps.regenerate({ cacheKey, need, owner: deps.owner });
  if (outcome.decision === ServeDecision.New) {
    const headers = generationHeaders(
      outcome.meta,
      CacheStatus.Miss,
      epochSeconds(deps.clock),
      deps.caching,
      {
        contentLength: outcome.page.body.byteLength,
        vary: varyOf(deps.tenancy?.header, deps.keyPolicy.variants, cacheKey.variant),
        cacheTags: {
          header: deps.cacheTagHeader,
          tags: cdnTagsOfPage(cacheKey, outcome.meta.tags),
        },
      },
    );
    return {
      status: outcome.page.status,
      headers,
      body: request.method === 'HEAD' ? undefined : outcome.page.body,
      decision: ServeDecision.New,
      cacheStatus: CacheStatus.Miss,
      cacheKeyHash: undefined,
    };
  }
  const current =
    outcome.decision === ServeDecision.Fresh
      ? outcome.meta
      : await awaitPublish(deps, cacheKey, need);
  const served =
    current === undefined
      ? undefined
      : await serveGeneration(deps, cacheKey, current, request, CacheStatus.Miss);
  if (served !== undefined) return { ...served, decision: outcome.decision };
  // The holder found the answer not to be stored: those who waited on it pass, not 503.
  if (deps.passThrough !== undefined) {
    const { pass } = await deps.cacheTable.readPage(cacheKey.pk);
    if (pass !== undefined && epochSeconds(deps.clock) < pass.until) {
      const why = { fwd: 'bypass', detail: 'hit-for-pass' } as const;
      return servePass(deps, deps.passThrough, request, why);
    }
  }
  return errorResponse(503, outcome.decision, 'the page is being rendered; try again shortly', {
    'retry-after': String(deps.retryAfterSeconds),
  });
}

/**
 * Polls META (strongly consistent, backing off on the clock) until the holder's publish shows,
 * its hit-for-pass mark does (undefined: the waiter passes), or `missWaitMs` is up.
 */
async function awaitPublish(
  deps: OriginDeps,
  cacheKey: CacheKey,
  need: Need,
): Promise<CacheMeta | undefined> {
  const deadline = deps.clock.now() + deps.missWaitMs;
  for (let delay = 25; ; delay = Math.min(delay * 2, 400)) {
    const { meta: current, pass } = await deps.cacheTable.readPage(cacheKey.pk);
    const now = epochSeconds(deps.clock);
    if (isAnswered(current, now, need)) return current;
    if (current === undefined && pass !== undefined && now < pass.until) return undefined;
    const left = deadline - deps.clock.now();
    if (left <= 0) return undefined;
    await deps.clock.sleep(Math.min(delay, left));
  }
}
