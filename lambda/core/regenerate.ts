import type { CacheKey } from './cache-key.js';
import { epochSeconds, type Clock } from './clock.js';
import {
  BodyNotFoundError,
  IsrError,
  LeaseHeldError,
  LeaseLostError,
  NewerGenerationError,
  RenderRetryableError,
  RequestAlreadyCompletedError,
  RetryableStoreError,
  type LeaseHolder,
} from './errors.js';
import { LeaseKeeper } from './lease-keeper.js';
import type {
  AcquiredLease,
  BodyStore,
  CacheMeta,
  CacheTable,
  IdempotencySeal,
  Lease,
  Renderer,
  RenderResult,
} from './ports.js';
import { RenderDisposition, renderDisposition } from './render-policy.js';
import { bodyKeyOf } from './rows.js';

/** Outcomes a caller logs as `decision`, with the names operators search for. */
export const Decision = {
  New: 'new',
  Fresh: 'fresh',
  Duplicate: 'duplicate',
  Conflict: 'conflict',
  LeaseHeld: 'lease-held',
  LeaseLost: 'lease-lost',
  Superseded: 'superseded',
  Rejected: 'rejected',
  InProgress: 'in-progress',
  Retry: 'retry',
  Poison: 'poison',
} as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

/** Where core code reports what it shrugs off (Powertools Logger fits). */
export interface LogSink {
  warn(message: string, extra: Record<string, unknown>): void;
}

export interface RegenerateDeps {
  readonly cacheTable: CacheTable;
  readonly bodies: BodyStore;
  readonly renderer: Renderer;
  readonly clock: Clock;
  /** Must outlast the render plus the body write; the lease is refreshed while rendering. */
  readonly leaseSeconds: number;
  /** How often the lease is refreshed during a render. @default a third of the lease */
  readonly leaseRefreshMs?: number | undefined;
  /**
   * How far apart two workers' clocks may be. A render only starts while the lease has more than
   * this left on the caller's clock, so no other worker can have taken the lease over yet.
   * @default 0
   */
  readonly clockSkewMarginSeconds?: number | undefined;
  /** Kept below the lease, so a render cannot outlive it unnoticed. */
  readonly renderTimeoutMs: number;
  readonly defaultRevalidateSeconds: number;
  /** Largest body published; larger pages are rejected. @default 5 MiB */
  readonly maxBodyBytes?: number;
  /** GC horizon of META after its generation; none when unset. */
  readonly metaTtlSeconds?: number | undefined;
  /** @default 3 */
  readonly publishAttempts?: number;
  readonly log?: LogSink | undefined;
}

export interface RegenerateInput {
  readonly cacheKey: CacheKey;
  /**
   * Whether the META found once the lease is held already answers the caller, so the render is
   * skipped: someone else published between the caller's read and its lease.
   */
  readonly isSatisfied: (current: CacheMeta | undefined, nowSeconds: number) => boolean;
  readonly seal?: IdempotencySeal | undefined;
  readonly owner?: string | undefined;
}

export type RegenerateOutcome =
  | { readonly decision: 'new'; readonly meta: CacheMeta; readonly page: RenderResult }
  | { readonly decision: 'fresh'; readonly meta: CacheMeta | undefined }
  | { readonly decision: 'lease-held'; readonly holder: LeaseHolder | undefined }
  | { readonly decision: 'lease-lost' }
  | { readonly decision: 'superseded'; readonly currentGeneratedAt: number | undefined }
  | { readonly decision: 'duplicate' }
  | { readonly decision: 'rejected'; readonly status: number; readonly reason: string };

const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;
const MAX_REVALIDATE_SECONDS = 365 * 24 * 3600;

/**
 * One regeneration under the lease: take the lease, re-read META, render, write a new body,
 * publish META + release LOCK (+ seal REQ#) in one transaction.
 *
 * Write order across the two stores: the body goes to S3 first, then META in DynamoDB points
 * at it. A crash between the two leaves an unreferenced body and a LOCK (and REQ# STARTED) that
 * expire; the next delivery redoes the work under a new key. A failed render publishes nothing,
 * so the last good page stays live. The lease is released on every path that did not publish.
 *
 * @throws RenderRetryableError, RetryableStoreError, or infrastructure errors: all retryable.
 */
export async function regenerate(
  deps: RegenerateDeps,
  input: RegenerateInput,
): Promise<RegenerateOutcome> {
  const { cacheTable, clock } = deps;
  const pk = input.cacheKey.pk;
  let lease: AcquiredLease;
  try {
    lease = await cacheTable.acquireLease({
      pk,
      now: epochSeconds(clock),
      durationSeconds: deps.leaseSeconds,
      owner: input.owner,
    });
  } catch (error) {
    if (error instanceof LeaseHeldError) return { decision: 'lease-held', holder: error.holder };
    throw error;
  }

  const keeper = new LeaseKeeper(cacheTable, lease, {
    clock,
    durationSeconds: deps.leaseSeconds,
    refreshEveryMs: deps.leaseRefreshMs,
    onRefreshError: (error) => deps.log?.warn('lease refresh failed', { pk, error }),
  });
  let lockGone = false;
  /** A body written whose publish ended in an error: its fate is known only once LOCK is. */
  let unsettledBody: string | undefined;
  try {
    const current = await cacheTable.getMeta(pk, { consistent: true });
    if (input.isSatisfied(current, epochSeconds(clock))) {
      return { decision: 'fresh', meta: current };
    }

    const generatedAt = epochSeconds(clock);
    // A caller paused since it took the lease may hold one that has run out, or that another
    // worker (whose clock may be ahead by the margin) is entitled to take over: it does not render.
    if (keeper.lease.expiresAt - (deps.clockSkewMarginSeconds ?? 0) <= generatedAt) {
      return { decision: 'lease-lost' };
    }
    const page = await renderUnderLease(deps, input.cacheKey, keeper.signal);
    if (page === 'lease-lost') return { decision: 'lease-lost' };
    const refusal = refusalOf(page, deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    if (refusal !== undefined) return refusal;
    if (keeper.signal.aborted) return { decision: 'lease-lost' };

    const { s3Key, etag } = await deps.bodies.putBody({
      s3Key: bodyKeyOf(input.cacheKey, lease.token),
      body: page.body,
      contentType: page.contentType,
    });
    const meta = metaFor(deps, input.cacheKey, page, { s3Key, etag, generatedAt });
    await keeper.stop();
    unsettledBody = s3Key;
    const published = await publish(deps, { lease: keeper.lease, meta, seal: input.seal });
    unsettledBody = undefined;
    if (published === 'published') {
      lockGone = true;
      await retireBody(deps, current, s3Key);
      return { decision: 'new', meta, page };
    }
    if (published instanceof LeaseLostError) {
      lockGone = true;
      // Either a stale writer, or our own commit whose answer was lost: META tells which.
      const live = await cacheTable.getMeta(pk, { consistent: true });
      if (live?.s3Key === s3Key) return { decision: 'new', meta, page };
      await deleteOrphan(deps, s3Key);
      return { decision: 'lease-lost' };
    }
    await deleteOrphan(deps, s3Key);
    if (published instanceof RequestAlreadyCompletedError) return { decision: 'duplicate' };
    return { decision: 'superseded', currentGeneratedAt: published.currentGeneratedAt };
  } finally {
    await keeper.stop();
    if (!lockGone) {
      const released = await cacheTable.releaseLease(keeper.lease).catch((error: unknown) => {
        deps.log?.warn('lease release failed; it expires on its own', { pk, error });
        return false;
      });
      // Our token was still on LOCK, so no publish of ours committed (a commit deletes LOCK), and
      // with LOCK gone none can: the body is an orphan. Otherwise either a publish of ours did
      // commit, or the lease's next taker retires the body (see `retireAbandonedBody`).
      if (released && unsettledBody !== undefined) await deleteOrphan(deps, unsettledBody);
    }
    if (lease.takenOver?.token !== undefined) {
      await retireAbandonedBody(deps, bodyKeyOf(input.cacheKey, lease.takenOver.token));
    }
  }
}

/** Renders with a timeout, and stops early if the lease is lost, whatever the renderer does. */
async function renderUnderLease(
  deps: RegenerateDeps,
  cacheKey: CacheKey,
  leaseSignal: AbortSignal,
): Promise<RenderResult | 'lease-lost'> {
  const timeout = AbortSignal.timeout(deps.renderTimeoutMs);
  const signal = AbortSignal.any([leaseSignal, timeout]);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([deps.renderer.render({ cacheKey, signal }), aborted]);
  } catch (error) {
    if (leaseSignal.aborted) return 'lease-lost';
    if (timeout.aborted) {
      const message = `render timed out after ${deps.renderTimeoutMs} ms`;
      throw new RenderRetryableError(message, undefined, { cause: error });
    }
    if (error instanceof IsrError) throw error;
    throw new RenderRetryableError('render failed', undefined, { cause: error });
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

function refusalOf(page: RenderResult, maxBodyBytes: number): RegenerateOutcome | undefined {
  const disposition = renderDisposition(page.status);
  if (disposition === RenderDisposition.Retry) {
    throw new RenderRetryableError(`renderer answered ${page.status}`, page.status);
  }
  if (disposition === RenderDisposition.Reject) {
    return {
      decision: 'rejected',
      status: page.status,
      reason: `renderer answered ${page.status}`,
    };
  }
  if (page.body.byteLength > maxBodyBytes) {
    return {
      decision: 'rejected',
      status: page.status,
      reason: `body of ${page.body.byteLength} bytes is over the ${maxBodyBytes}-byte limit`,
    };
  }
  return undefined;
}

function metaFor(
  deps: RegenerateDeps,
  cacheKey: CacheKey,
  page: RenderResult,
  stored: { s3Key: string; etag: string; generatedAt: number },
): CacheMeta {
  const revalidate = page.revalidateSeconds ?? deps.defaultRevalidateSeconds;
  return {
    pk: cacheKey.pk,
    s3Key: stored.s3Key,
    generatedAt: stored.generatedAt,
    revalidateSeconds: Math.min(Math.max(1, Math.floor(revalidate)), MAX_REVALIDATE_SECONDS),
    etag: stored.etag,
    ttl: deps.metaTtlSeconds === undefined ? undefined : stored.generatedAt + deps.metaTtlSeconds,
    cacheKey: cacheKey.key,
    contentType: page.contentType,
    statusCode: page.status,
    location: page.location,
    tags: page.tags,
  };
}

/** Publishes, retrying transient cancellations (conflicts with contenders hitting LOCK). */
async function publish(
  deps: RegenerateDeps,
  input: { lease: Lease; meta: CacheMeta; seal: IdempotencySeal | undefined },
): Promise<'published' | LeaseLostError | NewerGenerationError | RequestAlreadyCompletedError> {
  const attempts = deps.publishAttempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.cacheTable.publishGeneration({ ...input, now: epochSeconds(deps.clock) });
      return 'published';
    } catch (error) {
      if (
        error instanceof LeaseLostError ||
        error instanceof NewerGenerationError ||
        error instanceof RequestAlreadyCompletedError
      ) {
        return error;
      }
      if (!(error instanceof RetryableStoreError) || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt * (1 + Math.random())));
    }
  }
}

/** The previous body is no longer referenced: tag it so the bucket lifecycle expires it. */
async function retireBody(deps: RegenerateDeps, previous: CacheMeta | undefined, s3Key: string) {
  if (previous === undefined || previous.s3Key === s3Key) return;
  await deps.bodies.markSuperseded(previous.s3Key).catch((error: unknown) => {
    deps.log?.warn('could not tag the superseded body; it is kept', {
      s3Key: previous.s3Key,
      error,
    });
  });
}

/**
 * This caller took over an expired lease, so its holder stopped before publishing (a publish
 * deletes LOCK) and, its token replaced, can never publish now: the body it may have written
 * under that lease will never be referenced. Tag it for the lifecycle rule; there is often none.
 */
async function retireAbandonedBody(deps: RegenerateDeps, s3Key: string) {
  try {
    await deps.bodies.markSuperseded(s3Key);
    deps.log?.warn('retired the body of an abandoned lease', { s3Key });
  } catch (error) {
    if (error instanceof BodyNotFoundError) return;
    deps.log?.warn('could not tag the body of an abandoned lease; it is kept', { s3Key, error });
  }
}

/**
 * Removes a body no META points to. A caller without delete rights (the origin) tags it instead,
 * so the bucket lifecycle collects it like a superseded body.
 */
async function deleteOrphan(deps: RegenerateDeps, s3Key: string) {
  try {
    await deps.bodies.deleteBody(s3Key);
  } catch (deleteError) {
    await deps.bodies.markSuperseded(s3Key).catch((error: unknown) => {
      deps.log?.warn('could not delete or tag an unpublished body; it is kept', {
        s3Key,
        deleteError,
        error,
      });
    });
  }
}
