/**
 * The origin's use case: one viewer request served from the cache (HIT), at once while one
 * regeneration is queued (STALE), or rendered in the request (MISS, `miss.ts`).
 */
import { DEFAULT_FAILURE_POLICY, retryState, RetryState } from '../backoff.js';
import type { CacheKey, CacheMeta } from '../page/model.js';
import { epochSeconds } from '../clock.js';
import {
  ErrorKind,
  failureOf,
  InvalidCacheKeyError,
  InvalidKeyReason,
  RenderOverloadedError,
  RenderRefusedError,
} from '../errors.js';
import { isFresh, isHeld } from '../page/freshness.js';
import { refusedAnswer } from '../page/refusal.js';
import { routedPathReason } from '../traffic-rules.js';
import { regenerationIntent } from '../page/intent.js';
import { variantTagOf } from '../page/variants.js';
import { servedGenerationOf } from '../page/gone.js';
import { inProgressVerdict, InProgressVerdict, type InProgressState } from '../page/in-progress.js';
import { overloadFallback, serveGeneration } from './generation.js';
import { serveMiss } from './miss.js';
import { budgetSpent, withBudgetDetail } from './budget-status.js';
import { deliverableRender, servePass, type PassWhy } from './pass.js';
import { cacheKeyOf, type OriginDeps, type PageRequest } from './request.js';
import { ServeDecision } from './decision.js';
import { CacheStatus, errorResponse, jsonError, type PageResponse } from './responses.js';

const NOTHING_IN_PROGRESS: InProgressState = new Map();

/** How long a CDN may keep the 404 of a path outside the render allow-list. */
const NOT_RENDERABLE_SHARED_MAX_AGE = 60;

/**
 * Serves one origin request: HIT from the cache, STALE at once while one regeneration is queued,
 * MISS rendered in the request under the same lease and publish protocol as the worker. What a
 * failure becomes is decided by its kind (`failureOf`): a refused page is a 502 with its reason,
 * anything retryable a 503 with Retry-After, never a stack trace.
 */
export async function servePage(deps: OriginDeps, request: PageRequest): Promise<PageResponse> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    if (deps.passThrough !== undefined) {
      return servePass(deps, deps.passThrough, request, { fwd: 'method', detail: 'method' });
    }
    return errorResponse(405, ServeDecision.MethodNotAllowed, 'only GET and HEAD are served', {
      allow: 'GET, HEAD',
    });
  }
  let cacheKey: CacheKey;
  try {
    cacheKey = cacheKeyOf(deps, request);
  } catch (error) {
    if (!(error instanceof InvalidCacheKeyError)) throw error;
    if (error.reason === InvalidKeyReason.PathNotRenderable) {
      // Not a malformed request: a page that does not exist here. Shared caches may keep that.
      return errorResponse(404, error.reason, error.message, {
        'cache-control': `public, max-age=0, s-maxage=${NOT_RENDERABLE_SHARED_MAX_AGE}`,
      });
    }
    return errorResponse(400, error.reason, error.message);
  }
  const routed = deps.routing && routedPathReason(deps.routing, cacheKey.path);
  if (routed !== undefined && deps.passThrough !== undefined) {
    return servePass(deps, deps.passThrough, request, { fwd: 'request', detail: routed });
  }
  try {
    return { ...(await serveKey(deps, cacheKey, request)), cacheKeyHash: cacheKey.hash };
  } catch (error) {
    // The render (made without the viewer's cookies) is not to be stored: the viewer gets its
    // answer if the render asked what they asked, else the upstream's answer to their own request.
    if (error instanceof RenderRefusedError && deps.passThrough !== undefined) {
      const why: PassWhy = { fwd: 'bypass', detail: error.reason };
      const answer =
        deliverableRender(deps, { answer: refusedAnswer(error), key: cacheKey }, request, why) ??
        (await servePass(deps, deps.passThrough, request, why));
      return { ...answer, cacheKeyHash: cacheKey.hash };
    }
    const fallback =
      error instanceof RenderOverloadedError ? await overloadFallback(deps, request) : undefined;
    return { ...(fallback ?? failureResponse(deps, error)), cacheKeyHash: cacheKey.hash };
  }
}

/**
 * Whether a new variant of a page (no META yet) would pass the page's `maxVariantsPerPage`:
 * one count of its variant tag, on a MISS only, so a HIT costs nothing more.
 */
async function variantLimited(deps: OriginDeps, cacheKey: CacheKey): Promise<boolean> {
  const max = deps.maxVariantsPerPage;
  if (max === undefined || !cacheKey.variant || cacheKey.pageHash === undefined) return false;
  if (deps.tagIndex === undefined) return false;
  const tag = variantTagOf(cacheKey.pageHash);
  return (await deps.tagIndex.countPages(cacheKey.tenant, tag, max)).count >= max;
}

/** What a viewer is told for a retryable failure, by its code; never its cause. */
const RETRYABLE_ANSWERS: Record<string, readonly [ServeDecision, string]> = {
  'render-failed': [
    ServeDecision.RenderFailed,
    'the page could not be rendered; try again shortly',
  ],
  overloaded: [ServeDecision.Overloaded, 'too many pages are being rendered; try again shortly'],
  unavailable: [ServeDecision.Unavailable, 'the cache is unavailable; try again shortly'],
};

/** A failure as the viewer sees it: its kind picks the status, its code is the reason. */
function failureResponse(deps: OriginDeps, error: unknown): PageResponse {
  const failure = failureOf(error);
  if (failure.kind === ErrorKind.Terminal) {
    return {
      ...jsonError(502, failure.code, `the page could not be cached: ${failure.message}`),
      // A refused render's code reads `refused:<reason>` already.
      decision: `refused:${failure.code.replace(/^refused:/, '')}`,
      detail: { error },
    };
  }
  const [reason, message] = RETRYABLE_ANSWERS[failure.code] ?? RETRYABLE_ANSWERS.unavailable;
  return {
    ...errorResponse(503, reason, message, { 'retry-after': String(deps.retryAfterSeconds) }),
    detail: { error },
  };
}

async function serveKey(
  deps: OriginDeps,
  cacheKey: CacheKey,
  request: PageRequest,
): Promise<PageResponse> {
  const now = epochSeconds(deps.clock);
  // Strongly consistent: once a revalidation has answered 202, no read may still see the page
  // fresh (an eventually consistent read can lag, usually under a second). One Query reads META
  // and the hit-for-pass mark: 1 RCU while both fit in 4 KB. The in-progress revalidations are
  // read (or reused, `InProgressReader`) BEFORE it: read after META, they could miss the entry
  // of a fan-out that marked this page and ended in between, and pair that with META from
  // before the mark (a HIT older than a 202). A reused read costs no round trip.
  const inProgress = await (deps.inProgress?.read(cacheKey) ?? NOTHING_IN_PROGRESS);
  const rows = await deps.cacheTable.readPage(cacheKey.pk);
  const { pass } = rows;
  // META, or a gone path's row (its 404 inline, `page/gone.ts`) served as a generation.
  const { meta, inline } = servedGenerationOf(rows) ?? { meta: undefined };
  if (meta === undefined) {
    // A key remembered as pass goes to the upstream at once: no lease, render slot or write.
    if (pass !== undefined && now < pass.until && deps.passThrough !== undefined) {
      const why: PassWhy = { fwd: 'bypass', detail: 'hit-for-pass' };
      return servePass(deps, deps.passThrough, request, why);
    }
    if (await variantLimited(deps, cacheKey)) {
      if (deps.passThrough === undefined) {
        return errorResponse(
          503,
          ServeDecision.VariantLimit,
          'this page has as many variants as it keeps',
        );
      }
      return servePass(deps, deps.passThrough, request, { fwd: 'bypass', detail: 'variant-limit' });
    }
    return serveMiss(deps, cacheKey, request, { kind: 'page' });
  }

  // A tag still being marked: the page is served as its mark will leave it (STALE, or gone).
  const verdict = inProgressVerdict(meta, inProgress, deps.clockSkewMarginSeconds ?? 0);
  if (verdict === InProgressVerdict.Expire) {
    return serveMiss(deps, cacheKey, request, { kind: 'page', brokenBodyKey: meta.s3Key });
  }
  // A held page is served like a fresh one: an operator stopped its regeneration.
  const fresh = isHeld(meta, now) || (verdict === undefined && isFresh(meta, now));
  // A page whose regenerations keep failing waits out its backoff: no intent is queued.
  const policy = deps.failurePolicy ?? DEFAULT_FAILURE_POLICY;
  const state = retryState(meta.failures, now, policy, meta.ttl);
  // The enqueue runs beside the body read: a stale hit costs max(S3, SQS), not their sum.
  const enqueued: Promise<Enqueued> | undefined = fresh
    ? undefined
    : state === RetryState.Due
      ? enqueueRegeneration(deps, cacheKey, meta, now)
      : Promise.resolve({ enqueue: state, idempotencyKey: undefined });
  // Past the regeneration budget the page waits for a later minute: read beside the body too.
  const spent =
    !fresh && state === RetryState.Due && deps.budget !== undefined
      ? budgetSpent(deps, cacheKey, now)
      : undefined;
  const cacheStatus = fresh ? CacheStatus.Hit : CacheStatus.Stale;
  const served = await serveGeneration(deps, cacheKey, meta, request, cacheStatus, inline);
  const { enqueue, idempotencyKey } = (await enqueued) ?? {};
  if (served === undefined) {
    const miss = await serveMiss(deps, cacheKey, request, {
      kind: 'page',
      brokenBodyKey: meta.s3Key,
    });
    return {
      ...miss,
      idempotencyKey: miss.idempotencyKey ?? idempotencyKey,
      detail: { ...miss.detail, bodyMissing: meta.s3Key, enqueue },
    };
  }
  if ((await spent) === true) {
    return { ...withBudgetDetail(served), idempotencyKey, detail: { enqueue, budget: 'spent' } };
  }
  return { ...served, idempotencyKey, detail: enqueue && { enqueue } };
}

/** What a STALE did about its regeneration, and the intent's deduplication id if it sent one. */
interface Enqueued {
  readonly enqueue: 'enqueued' | 'enqueue-failed' | RetryState;
  readonly idempotencyKey: string | undefined;
}

/**
 * Queues one regeneration intent; a failure is reported, never turned into an error page. Its
 * deduplication id is the request's idempotency key: every STALE of the page in one dedupe
 * window sends (and logs) the same id, which SQS keeps one message of.
 */
async function enqueueRegeneration(
  deps: OriginDeps,
  cacheKey: CacheKey,
  meta: CacheMeta,
  now: number,
): Promise<Enqueued> {
  const queued = regenerationIntent(cacheKey, deps.deployId, {
    kind: 'stale',
    meta,
    nowSeconds: now,
    windowSeconds: deps.dedupeWindowSeconds,
  });
  const idempotencyKey = queued.deduplicationId;
  try {
    await deps.queue.enqueue(queued.intent, queued);
    return { enqueue: 'enqueued', idempotencyKey };
  } catch (error) {
    deps.log?.warn('could not enqueue a regeneration; the stale page is served', {
      cacheKeyHash: cacheKey.hash,
      idempotencyKey,
      error,
    });
    return { enqueue: 'enqueue-failed', idempotencyKey };
  }
}
