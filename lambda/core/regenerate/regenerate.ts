/**
 * One regeneration under the lease: take the lease, re-read META, render, write a new body,
 * publish META + release LOCK (+ seal REQ#) in one transaction, then settle what is left.
 *
 * Write order across the two stores: the body goes to S3 first, then META in DynamoDB points
 * at it. A crash between the two leaves an unreferenced body and a LOCK (and REQ# STARTED) that
 * expire; the next delivery redoes the work under a new key, and the next lease taker retires
 * the body. A failed render publishes nothing, so the last good page stays live.
 */
import { isOwnKeyOf } from '../page/cache-key.js';
import type { AcquiredLease, CacheMeta, GonePage, RenderResult } from '../page/model.js';
import { goneAsMeta } from '../page/gone.js';
import type { RegenerateInput, RegenerateOutcome } from '../page/regeneration.js';
import { epochSeconds } from '../clock.js';
import { RenderRefusedError, RevalidatedDuringRenderError } from '../errors.js';
import { isAnswered, isHeld } from '../page/freshness.js';
import {
  abandonedBodyOf,
  canStartRender,
  LeaseKeeper,
  releaseLease,
  tryTakeLease,
} from '../page/lease.js';
import {
  admitPage,
  DEFAULT_ANSWER_POLICY,
  type AdmittedPage,
  type RenderPolicy,
} from './render-policy.js';
import { AnsweredRefusal } from '../page/refusal.js';
import { admitVariant } from '../page/variants.js';
import { indexGainedTags, indexPassedVariant, afterPublish } from './after-publish.js';
import { generationToPublish } from './generation.js';
import { publish, type PublishResult } from './publish.js';
import { logDropped, renderInSlot, renderUnderLease } from './render.js';
import { retireBody } from './retire.js';
import { isUnchanged, pageDigest, refreshUnchanged } from './unchanged.js';
import { goneToStore, storeGone } from './gone.js';
import type { RegenerateDeps } from './deps.js';

/**
 * Regenerates a page once, under its lease (see the module comment). The lease is released and
 * what is left is settled before it returns or throws.
 * @throws RenderRefusedError (terminal: the page must not be cached), RenderRetryableError (the
 * render may succeed later), RenderOverloadedError (every render slot is taken),
 * RevalidatedDuringRenderError (revalidated during every render it was allowed), or a store
 * error, a TransactionConflictError past its publish attempts among them
 */
export async function regenerate(
  deps: RegenerateDeps,
  input: RegenerateInput,
): Promise<RegenerateOutcome> {
  const taken = await tryTakeLease(deps.cacheTable, {
    pk: input.cacheKey.pk,
    now: epochSeconds(deps.clock),
    durationSeconds: deps.leaseSeconds,
    owner: input.owner,
  });
  if (!('lease' in taken)) return { decision: 'lease-held', holder: taken.heldBy };
  return new Regeneration(deps, input, taken.lease).run();
}

/**
 * `regenerate` as a method of the deps that carry its ports: the origin's MISS
 * (`InRequestRegeneration`), so a copy of the deps with one port replaced renders with it too.
 */
export function regenerateInRequest(
  this: RegenerateDeps,
  input: RegenerateInput,
): Promise<RegenerateOutcome> {
  return regenerate(this, input);
}

/**
 * Where a regeneration stands, as far as what it leaves behind goes: the only state it carries.
 * - `leased`: LOCK is ours (until it expires), no body written;
 * - `body-written`: LOCK is ours and a body was written that our publish may yet point to;
 * - `refused`: LOCK is ours, and the body written will never be published (a publish was
 *   cancelled by a condition on META, REQ# or a revalidation's mark);
 * - `published`: our publish committed and deleted LOCK: nothing is left;
 * - `lease-lost`: LOCK is not ours any more; `orphan` is a body of ours no META points to.
 */
type Standing =
  | { readonly step: 'leased' }
  | { readonly step: 'body-written'; readonly s3Key: string }
  | { readonly step: 'refused'; readonly s3Key: string }
  | { readonly step: 'published' }
  | { readonly step: 'lease-lost'; readonly orphan?: string | undefined };

/** A revalidation came during the render: its page may predate it, so render once more. */
const RENDER_AGAIN = 'render-again';
/**
 * What a refused publish or refresh means: a revalidation's mark renders again; a lost lease, a
 * newer generation or another delivery's publish ends the regeneration as the outcome of its name.
 */
function refusalOutcome(
  refused: Exclude<PublishResult, { readonly status: 'published' }>,
): RegenerateOutcome | typeof RENDER_AGAIN {
  switch (refused.status) {
    case 'revalidated':
      return RENDER_AGAIN;
    case 'superseded':
      return { decision: 'superseded', currentGeneratedAt: refused.currentGeneratedAt };
    case 'lease-lost':
    case 'duplicate':
      return { decision: refused.status };
  }
}

/** Renders after a revalidation before the intent is left to a retry. */
const MAX_RENDERS_AFTER_REVALIDATION = 2;

/** One regeneration, from the lease taken to what it leaves behind settled. */
class Regeneration {
  readonly #deps: RegenerateDeps;
  readonly #input: RegenerateInput;
  readonly #lease: AcquiredLease;
  readonly #keeper: LeaseKeeper;
  /** The tag revalidations this lease already rendered again for (they count once). */
  readonly #seenTagRevalidations = new Map<string, number>();
  #standing: Standing = { step: 'leased' };

  constructor(deps: RegenerateDeps, input: RegenerateInput, lease: AcquiredLease) {
    this.#deps = deps;
    this.#input = input;
    this.#lease = lease;
    this.#keeper = new LeaseKeeper(deps.cacheTable, lease, {
      clock: deps.clock,
      durationSeconds: deps.leaseSeconds,
      refreshEveryMs: deps.leaseRefreshMs,
      onRefreshError: (error) => deps.log?.warn('lease refresh failed', { pk: lease.pk, error }),
    });
  }

  async run(): Promise<RegenerateOutcome> {
    try {
      for (let attempt = 1; ; attempt++) {
        const outcome = await this.#renderAndPublish();
        if (outcome !== RENDER_AGAIN) return outcome;
        if (attempt > MAX_RENDERS_AFTER_REVALIDATION) {
          throw new RevalidatedDuringRenderError(this.#lease.pk);
        }
        if (!(await this.#startOver())) return { decision: 'lease-lost' };
      }
    } finally {
      await this.#keeper.stop();
      await this.#settle();
      const abandoned = abandonedBodyOf(
        this.#input.cacheKey,
        this.#lease,
        this.#deps.bodyKeyPrefix,
      );
      if (abandoned !== undefined) await retireBody(this.#deps, abandoned);
    }
  }

  async #renderAndPublish(): Promise<RegenerateOutcome | typeof RENDER_AGAIN> {
    const deps = this.#deps;
    const { cacheKey, need } = this.#input;
    const current = await deps.cacheTable.getMeta(cacheKey.pk, { consistent: true });
    const renderStartedMs = deps.clock.now();
    const generatedAt = Math.floor(renderStartedMs / 1000);
    // An operator's hold stops queued regenerations; a viewer waiting on a broken body still gets one.
    if (need.kind === 'intent' && isHeld(current, generatedAt)) {
      return { decision: 'held', holdUntil: current?.holdUntil ?? generatedAt };
    }
    if (isAnswered(current, generatedAt, need)) return { decision: 'fresh', meta: current };
    if (!canStartRender(this.#keeper.lease, generatedAt, deps.clockSkewMarginSeconds ?? 0)) {
      return { decision: 'lease-lost' };
    }
    const rendered = await renderInSlot(deps, this.#input.owner, () =>
      renderUnderLease(deps, cacheKey, this.#keeper.signal),
    );
    if (rendered === 'lease-lost' || this.#keeper.signal.aborted) return { decision: 'lease-lost' };
    // A redirect to its own key (`/a` -> `/a/`) is never stored: it would loop once cached.
    const answerPolicy = { ...(deps.answerPolicy ?? DEFAULT_ANSWER_POLICY) };
    const page = await this.#admitOrMarkPass(rendered, {
      ...deps,
      answerPolicy: { ...answerPolicy, isOwnKey: isOwnKeyOf(cacheKey) },
    });
    logDropped(deps, cacheKey, page);
    const gone = goneToStore(deps, cacheKey, page, { current, generatedAt });
    if (gone !== undefined) return this.#storeGone(gone, page);
    const since = { renderStartedMs, seen: this.#seenTagRevalidations };
    if (await indexGainedTags(deps, cacheKey, current, page, since)) return RENDER_AGAIN;
    const digest = pageDigest(page);
    if (isUnchanged(current, digest, need)) return this.#refresh(current, page, generatedAt);
    const meta = await this.#writeBody(page, { generatedAt, current, digest });
    await this.#keeper.stop();
    return this.#publish(current, meta, page);
  }

  /** A gone path's small 404 or 410: one row, written as LOCK is released (`gone.ts`). */
  async #storeGone(
    gone: GonePage,
    page: AdmittedPage,
  ): Promise<RegenerateOutcome | typeof RENDER_AGAIN> {
    await this.#keeper.stop();
    const stored = await storeGone(this.#deps, this.#keeper.lease, gone);
    if (stored === 'revalidated') return RENDER_AGAIN;
    this.#standing = stored === 'stored' ? { step: 'published' } : { step: 'lease-lost' };
    return stored === 'stored'
      ? { decision: 'gone', meta: goneAsMeta(gone), page }
      : { decision: 'lease-lost' };
  }

  /**
   * The render equals the live generation: its freshness alone moves on (`unchanged.ts`); LOCK
   * stays ours until `#settle` releases it, and no body was written.
   */
  async #refresh(
    current: CacheMeta,
    page: AdmittedPage,
    generatedAt: number,
  ): Promise<RegenerateOutcome | typeof RENDER_AGAIN> {
    await this.#keeper.stop();
    const lease = this.#keeper.lease;
    const refreshed = await refreshUnchanged(this.#deps, {
      lease,
      observed: current,
      page,
      generatedAt,
    });
    if (refreshed.status !== 'refreshed') return refusalOutcome(refreshed);
    return { decision: 'unchanged', meta: refreshed.meta, page };
  }

  /** Writes the page's body (S3 first: META will point at it) and returns the META to publish. */
  async #writeBody(
    page: AdmittedPage,
    at: {
      readonly generatedAt: number;
      readonly current: CacheMeta | undefined;
      readonly digest: string;
    },
  ): Promise<CacheMeta> {
    const generation = generationToPublish(this.#deps, this.#input.cacheKey, page, {
      ...at,
      token: this.#keeper.lease.token,
    });
    this.#standing = { step: 'body-written', s3Key: generation.s3Key };
    const { etag } = await this.#deps.bodies.putBody({
      s3Key: generation.s3Key,
      body: page.body,
      contentType: page.contentType,
      metadata: {
        status: page.status,
        contentType: page.contentType,
        contentSecurityPolicy: page.keptHeaders?.['content-security-policy'],
      },
    });
    return generation.meta(etag);
  }

  /** The publish transaction, and what its answer means for the page and what is left. */
  async #publish(
    current: CacheMeta | undefined,
    meta: CacheMeta,
    page: RenderResult,
  ): Promise<RegenerateOutcome | typeof RENDER_AGAIN> {
    const deps = this.#deps;
    const published = await publish(deps, {
      lease: this.#keeper.lease,
      meta,
      seal: this.#input.seal,
      observed: current,
    });
    if (published.status === 'published') {
      this.#standing = { step: 'published' };
      await afterPublish(deps, this.#input.cacheKey, current, meta);
      return { decision: 'new', meta, page };
    }
    if (published.status === 'lease-lost') {
      // Either a stale writer, or our own commit whose answer was lost: META tells which.
      const live = await deps.cacheTable.getMeta(meta.pk, { consistent: true });
      const ours = live?.s3Key === meta.s3Key;
      this.#standing = ours ? { step: 'published' } : { step: 'lease-lost', orphan: meta.s3Key };
      return ours ? { decision: 'new', meta, page } : { decision: 'lease-lost' };
    }
    this.#standing = { step: 'refused', s3Key: meta.s3Key }; // cancelled: LOCK is still ours
    return refusalOutcome(published);
  }

  /**
   * The page to publish; an answer not to be stored leaves the key marked as pass (hit-for-pass)
   * under this lease, META and LOCK deleted in the same transaction, before the refusal goes on.
   */
  async #admitOrMarkPass(
    rendered: Parameters<typeof admitPage>[0],
    policy: RenderPolicy,
  ): Promise<AdmittedPage> {
    try {
      // A variant's 404 is refused too (never kept): it is marked for pass like any refusal.
      return admitVariant(admitPage(rendered, policy), this.#input.cacheKey);
    } catch (error) {
      if (!(error instanceof RenderRefusedError)) throw error;
      const seconds = this.#deps.hitForPassSeconds ?? 0;
      if (seconds > 0) await this.#markPass(error, seconds);
      // The answer goes with the refusal: the viewer whose request it was may get it (serve.ts).
      throw new AnsweredRefusal(error, rendered);
    }
  }

  /** Writes META#PASS under the lease; a lost or marked lease leaves it unwritten (logged). */
  async #markPass(refusal: RenderRefusedError, seconds: number): Promise<void> {
    const deps = this.#deps;
    const now = epochSeconds(deps.clock);
    const { cacheKey } = this.#input;
    await this.#keeper.stop();
    try {
      await indexPassedVariant(deps, cacheKey);
      await deps.cacheTable.markPass({
        lease: this.#keeper.lease,
        now,
        mark: {
          pk: cacheKey.pk,
          until: now + seconds,
          reason: refusal.reason,
          markedAt: now,
          cacheKey: cacheKey.key,
          ttl: now + seconds + 3_600,
        },
      });
      this.#standing = { step: 'published' }; // LOCK went with it: nothing is left
    } catch (error) {
      deps.log?.warn('could not mark the key as pass', { cacheKeyHash: cacheKey.hash, error });
    }
  }

  /**
   * Before a render after a revalidation: the unpublished body goes (the cancelled publish left
   * LOCK ours, so nothing points at it), the mark is lifted from LOCK and the keeper refreshes
   * again. @returns false when the lease is no longer ours
   */
  async #startOver(): Promise<boolean> {
    const { step } = this.#standing;
    if (step === 'refused' || step === 'body-written') {
      await retireBody(this.#deps, this.#standing.s3Key);
    }
    if (!(await this.#deps.cacheTable.clearRevalidationMark(this.#keeper.lease))) {
      this.#standing = { step: 'lease-lost' };
      return false;
    }
    this.#standing = { step: 'leased' };
    this.#keeper.restart();
    return true;
  }

  /**
   * Releases a LOCK still ours and retires a body no META can point to: one whose publish was
   * refused, one left by a lost lease, or one written under a LOCK this release proves no
   * publish of ours committed under (see `releaseLease`).
   */
  async #settle(): Promise<void> {
    const standing = this.#standing;
    if (standing.step === 'published') return;
    if (standing.step === 'lease-lost') {
      if (standing.orphan !== undefined) await retireBody(this.#deps, standing.orphan);
      return;
    }
    const released = await releaseLease(this.#deps.cacheTable, this.#keeper.lease, {
      sink: this.#deps.log,
      what: 'lease',
    });
    if (standing.step === 'refused' || (standing.step === 'body-written' && released)) {
      await retireBody(this.#deps, standing.s3Key);
    }
  }
}
