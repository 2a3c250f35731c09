/**
 * A MISS: the page rendered in the request under the same lease and publish protocol as the
 * worker, or, while another holder renders it, that holder's publish waited for (bounded).
 */
import { varyOf } from '../page/variants.js';
import type { CacheKey } from '../page/model.js';
import { servedGenerationOf, type ServedGeneration } from '../page/gone.js';
import { cdnTagsOfPage } from '../page/cache-tags.js';
import { epochSeconds } from '../clock.js';
import { isAnswered, type Need } from '../page/freshness.js';
import { versionIdOf } from '../page/rows.js';
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
  // An unchanged render, and a gone path's inline 404, are served as a new page is.
  if (
    outcome.decision === ServeDecision.New ||
    outcome.decision === 'unchanged' ||
    outcome.decision === 'gone'
  ) {
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
      decision: outcome.decision,
      cacheStatus: CacheStatus.Miss,
      cacheKeyHash: undefined,
      // The regeneration's own key: its version (`<generated_at>-<lease token>`), as `isr
      // inspect` lists it and its body and VER# row are named.
      idempotencyKey: outcome.meta.currentSk && versionIdOf(outcome.meta.currentSk),
    };
  }
  const current: ServedGeneration | undefined =
    outcome.decision !== ServeDecision.Fresh
      ? await awaitPublish(deps, cacheKey, need)
      : outcome.meta && { meta: outcome.meta };
  const served =
    current === undefined
      ? undefined
      : await serveGeneration(
          deps,
          cacheKey,
          current.meta,
          request,
          CacheStatus.Miss,
          current.inline,
        );
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
 * Polls META (strongly consistent, backing off on the clock) until the holder's publish shows
 * (or its gone row, `page/gone.ts`), its hit-for-pass mark does (undefined: the waiter passes),
 * or `missWaitMs` is up.
 */
async function awaitPublish(
  deps: OriginDeps,
  cacheKey: CacheKey,
  need: Need,
): Promise<ServedGeneration | undefined> {
  const deadline = deps.clock.now() + deps.missWaitMs;
  for (let delay = 25; ; delay = Math.min(delay * 2, 400)) {
    const rows = await deps.cacheTable.readPage(cacheKey.pk);
    const { pass } = rows;
    const served = servedGenerationOf(rows);
    const current = served?.meta;
    const now = epochSeconds(deps.clock);
    if (isAnswered(current, now, need)) return served;
    if (current === undefined && pass !== undefined && now < pass.until) return undefined;
    const left = deadline - deps.clock.now();
    if (left <= 0) return undefined;
    await deps.clock.sleep(Math.min(delay, left));
  }
}
