import type { RenderAdmission } from '../admission.js';
import type { CacheKey } from '../cache-key.js';
import { epochSeconds, type Clock } from '../clock.js';
import {
  IsrError,
  LeaseLostError,
  NewerGenerationError,
  RenderOverloadedError,
  RevalidatedDuringRenderError,
  RenderRetryableError,
  RequestAlreadyCompletedError,
  TransactionConflictError,
  type LeaseHolder,
} from '../errors.js';
import { isAnswered, isHeld, type Need } from '../freshness.js';
import type { LogSink } from '../log.js';
import {
  abandonedBodyOf,
  canStartRender,
  LeaseKeeper,
  releaseLease,
  tryTakeLease,
} from '../lease.js';
import type {
  AcquiredLease,
  BodyStore,
  CacheMeta,
  CacheTable,
  IdempotencySeal,
  Lease,
  Renderer,
  RenderResult,
  TagIndex,
  VersionRows,
} from '../ports.js';
import { admitPage, type AdmittedPage, type RenderPolicy } from '../render-policy.js';
import { bodyKeyOf, versionSortKey } from '../rows.js';
import { SETTING_DEFAULTS } from '../settings.js';

/** Outcomes a caller logs as `decision`, with the names operators search for. */
export const Decision = {
  New: 'new',
  Fresh: 'fresh',
  Duplicate: 'duplicate',
  Conflict: 'conflict',
  LeaseHeld: 'lease-held',
  LeaseLost: 'lease-lost',
  Superseded: 'superseded',
  Refused: 'refused',
  RenderFailed: 'render-failed',
  Backoff: 'backoff',
  InProgress: 'in-progress',
  Retry: 'retry',
  Poison: 'poison',
  /** An operator holds the page (`isr hold`, `isr rollback --hold`): not regenerated. */
  Held: 'held',
  /** An ignorable error ended the work: someone else did, or is doing, it. */
  Ignored: 'ignored',
} as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

export interface RegenerateDeps extends RenderPolicy {
  readonly cacheTable: CacheTable;
  readonly bodies: BodyStore;
  readonly renderer: Renderer;
  readonly clock: Clock;
  /** Must outlast the render plus the body write; the lease is refreshed while rendering. */
  readonly leaseSeconds: number;
  /** How often the lease is refreshed during a render. @default a third of the lease */
  readonly leaseRefreshMs?: number | undefined;
  /** How far apart two workers' clocks may be (see `canStartRender`). @default 0 */
  readonly clockSkewMarginSeconds?: number | undefined;
  /** Kept below the lease, so a render cannot outlive it unnoticed. */
  readonly renderTimeoutMs: number;
  /** Where bodies are written. @default BODY_KEY_PREFIX */
  readonly bodyKeyPrefix?: string | undefined;
  /** How long a META row outlives its freshness before DynamoDB TTL may collect it. */
  readonly retention?: Retention | undefined;
  /** Publish attempts when the transaction is cancelled by a conflict. @default 3 */
  readonly publishAttempts?: number;
  readonly log?: LogSink | undefined;
  /** Caps renders at once (the origin's MISSes); none when unset (the worker's event source caps it). */
  readonly admission?: RenderAdmission | undefined;
  /** The tag -> page index; a page's tags are not indexed without it. */
  readonly tagIndex?: TagIndex | undefined;
  /** The page's VER# rows: versions a publish drops from META's list are deleted here. */
  readonly versions: VersionRows;
  /** Versions kept per page, the live one included. @default SETTING_DEFAULTS.keepVersions */
  readonly keepVersions?: number | undefined;
}

export interface RegenerateInput {
  readonly cacheKey: CacheKey;
  /** What the render is for; the skip rule (`isAnswered`) reads it once the lease is held. */
  readonly need: Need;
  readonly seal?: IdempotencySeal | undefined;
  readonly owner?: string | undefined;
}

export type RegenerateOutcome =
  | { readonly decision: 'new'; readonly meta: CacheMeta; readonly page: RenderResult }
  | { readonly decision: 'fresh'; readonly meta: CacheMeta | undefined }
  | { readonly decision: 'held'; readonly holdUntil: number }
  | { readonly decision: 'lease-held'; readonly holder: LeaseHolder | undefined }
  | { readonly decision: 'lease-lost' }
  | { readonly decision: 'superseded'; readonly currentGeneratedAt: number | undefined }
  | { readonly decision: 'duplicate' };

/**
 * What is left to clean up when a regeneration ends: the LOCK row while this caller still holds
 * it, and a body it wrote that META does not point to. `unknown`: a publish of ours may have
 * committed; `orphan`: no META will ever point to it.
 */
interface Loose {
  lockHeld: boolean;
  body?: { readonly s3Key: string; readonly fate: 'unknown' | 'orphan' } | undefined;
}

/**
 * One regeneration under the lease: take the lease, re-read META, render, write a new body,
 * publish META + release LOCK (+ seal REQ#) in one transaction, then settle what is left.
 *
 * Write order across the two stores: the body goes to S3 first, then META in DynamoDB points
 * at it. A crash between the two leaves an unreferenced body and a LOCK (and REQ# STARTED) that
 * expire; the next delivery redoes the work under a new key, and the next lease taker retires
 * the body. A failed render publishes nothing, so the last good page stays live.
 *
 * @throws RenderRefusedError (terminal: the page must not be cached), RenderRetryableError
 * (the render may succeed later), or a store error; the lease is released first in every case.
 */
export async function regenerate(
  deps: RegenerateDeps,
  input: RegenerateInput,
): Promise<RegenerateOutcome> {
  const lease = await takeLease(deps, input);
  if ('decision' in lease) return lease;
  const keeper = new LeaseKeeper(deps.cacheTable, lease, {
    clock: deps.clock,
    durationSeconds: deps.leaseSeconds,
    refreshEveryMs: deps.leaseRefreshMs,
    onRefreshError: (error) => deps.log?.warn('lease refresh failed', { pk: lease.pk, error }),
  });
  const loose: Loose = { lockHeld: true };
  const seenTagRevalidations = new Map<string, number>();
  try {
    for (let attempt = 1; ; attempt++) {
      const outcome = await renderAndPublish(deps, input, keeper, loose, seenTagRevalidations);
      if (outcome !== RENDER_AGAIN) return outcome;
      if (attempt > MAX_RENDERS_AFTER_REVALIDATION) {
        throw new RevalidatedDuringRenderError(lease.pk);
      }
      if (!(await startOver(deps, keeper, loose))) return { decision: 'lease-lost' };
    }
  } finally {
    await keeper.stop();
    await settle(deps, keeper.lease, loose);
    const abandoned = abandonedBodyOf(input.cacheKey, lease, deps.bodyKeyPrefix);
    if (abandoned !== undefined) await deleteOrphan(deps, abandoned);
  }
}

async function takeLease(
  deps: RegenerateDeps,
  input: RegenerateInput,
): Promise<AcquiredLease | RegenerateOutcome> {
  const taken = await tryTakeLease(deps.cacheTable, {
    pk: input.cacheKey.pk,
    now: epochSeconds(deps.clock),
    durationSeconds: deps.leaseSeconds,
    owner: input.owner,
  });
  return 'lease' in taken ? taken.lease : { decision: 'lease-held', holder: taken.heldBy };
}

/** A revalidation came during the render: its page may predate it, so render once more. */
const RENDER_AGAIN = 'render-again';
/** Renders after a revalidation before the intent is left to a retry. */
const MAX_RENDERS_AFTER_REVALIDATION = 2;

async function renderAndPublish(
  deps: RegenerateDeps,
  input: RegenerateInput,
  keeper: LeaseKeeper,
  loose: Loose,
  seenTagRevalidations: Map<string, number>,
): Promise<RegenerateOutcome | typeof RENDER_AGAIN> {
  const { cacheKey } = input;
  const current = await deps.cacheTable.getMeta(cacheKey.pk, { consistent: true });
  const renderStartedMs = deps.clock.now();
  const generatedAt = Math.floor(renderStartedMs / 1000);
  // An operator's hold stops queued regenerations; a viewer waiting on a broken body still gets one.
  if (input.need.kind === 'intent' && isHeld(current, generatedAt)) {
    return { decision: 'held', holdUntil: current?.holdUntil ?? generatedAt };
  }
  if (isAnswered(current, generatedAt, input.need)) return { decision: 'fresh', meta: current };
  if (!canStartRender(keeper.lease, generatedAt, deps.clockSkewMarginSeconds ?? 0)) {
    return { decision: 'lease-lost' };
  }
  const rendered = await admitted(deps, input, () =>
    renderUnderLease(deps, cacheKey, keeper.signal),
  );
  if (rendered === 'lease-lost' || keeper.signal.aborted) return { decision: 'lease-lost' };
  const page = admitPage(rendered, deps);
  logDropped(deps, cacheKey, page);
  if (
    await gainedRevalidatedTag(deps, cacheKey, current, page, renderStartedMs, seenTagRevalidations)
  ) {
    return RENDER_AGAIN;
  }
  const meta = await writeBody(deps, cacheKey, page, keeper, loose, { generatedAt, current });
  await keeper.stop();
  const published = await publish(deps, { lease: keeper.lease, meta, seal: input.seal });
  if (published === 'published') {
    Object.assign(loose, { lockHeld: false, body: undefined });
    await afterPublish(deps, cacheKey, current, meta);
    return { decision: 'new', meta, page };
  }
  if (published instanceof LeaseLostError) {
    // Either a stale writer, or our own commit whose answer was lost: META tells which.
    const live = await deps.cacheTable.getMeta(cacheKey.pk, { consistent: true });
    const ours = live?.s3Key === meta.s3Key;
    const orphan = { s3Key: meta.s3Key, fate: 'orphan' } as const;
    Object.assign(loose, { lockHeld: false, body: ours ? undefined : orphan });
    return ours ? { decision: 'new', meta, page } : { decision: 'lease-lost' };
  }
  loose.body = { s3Key: meta.s3Key, fate: 'orphan' }; // cancelled: LOCK is still ours
  if (published instanceof RevalidatedDuringRenderError) return RENDER_AGAIN;
  if (published instanceof RequestAlreadyCompletedError) return { decision: 'duplicate' };
  return { decision: 'superseded', currentGeneratedAt: published.currentGeneratedAt };
}

/** Writes the page's body (S3 first: META will point at it) and returns the META to publish. */
async function writeBody(
  deps: RegenerateDeps,
  cacheKey: CacheKey,
  page: AdmittedPage,
  keeper: LeaseKeeper,
  loose: Loose,
  at: { readonly generatedAt: number; readonly current: CacheMeta | undefined },
): Promise<CacheMeta> {
  const { token } = keeper.lease;
  const s3Key = bodyKeyOf(cacheKey, token, deps.bodyKeyPrefix);
  loose.body = { s3Key, fate: 'unknown' };
  const { etag } = await deps.bodies.putBody({
    s3Key,
    body: page.body,
    contentType: page.contentType,
    metadata: {
      status: page.status,
      contentType: page.contentType,
      contentSecurityPolicy: page.keptHeaders?.['content-security-policy'],
    },
  });
  const stored = { s3Key, etag, generatedAt: at.generatedAt };
  return metaFor(deps, cacheKey, page, stored, versionsAfter(deps, at.current, stored, token));
}

/**
 * META's version attributes once this generation is published: it becomes the live version,
 * first in the kept list, followed by the one live until now (always kept: reads in flight and a
 * rollback need it) and the newest others, up to `keepVersions`. A hold carries over.
 */
function versionsAfter(
  deps: RegenerateDeps,
  current: CacheMeta | undefined,
  stored: { generatedAt: number },
  token: string,
): Pick<CacheMeta, 'currentSk' | 'versionSks' | 'holdUntil'> {
  const sk = versionSortKey(stored.generatedAt, token);
  const keep = deps.keepVersions ?? SETTING_DEFAULTS.keepVersions;
  const previous = current?.versionSks ?? [];
  const live = current?.currentSk !== undefined ? [current.currentSk] : [];
  const ordered = [sk, ...live, ...previous.filter((other) => !live.includes(other))];
  return {
    currentSk: sk,
    versionSks: [...new Set(ordered)].slice(0, keep),
    holdUntil: isHeld(current, stored.generatedAt) ? current?.holdUntil : undefined,
  };
}

/**
 * Indexes the page under the tags it did not carry before, then tells whether one of them was
 * revalidated since the render started (or within the clock-skew margin before): a revalidation
 * that ran before the index rows existed could not find this page, so its render is redone.
 * A revalidation this lease already rendered again for (`seen`) does not count twice.
 */
async function gainedRevalidatedTag(
  deps: RegenerateDeps,
  cacheKey: CacheKey,
  current: CacheMeta | undefined,
  page: AdmittedPage,
  renderStartedMs: number,
  seen: Map<string, number>,
): Promise<boolean> {
  const gained = (page.tags ?? []).filter((tag) => !(current?.tags ?? []).includes(tag));
  if (deps.tagIndex === undefined || gained.length === 0) return false;
  await deps.tagIndex.add(cacheKey.tenant, cacheKey.pk, gained);
  const revalidated = await deps.tagIndex.revalidatedAt(cacheKey.tenant, gained);
  const since = renderStartedMs - (deps.clockSkewMarginSeconds ?? 0) * 1000;
  let racing = false;
  for (const [tag, atMs] of revalidated) {
    if (atMs >= since && seen.get(tag) !== atMs) racing = true;
    seen.set(tag, atMs);
  }
  return racing;
}

/**
 * Versions the publish dropped from META's list go, row first, then body; and the tags the page
 * lost leave the index. Both best-effort: what is left is the sweeper's (an unlisted version row,
 * a body nothing points to). The body live until now stays: it is a kept version (and, written
 * before versions were kept, nothing lists it, so the sweeper retires it after its safety window,
 * once reads in flight are done).
 */
async function afterPublish(
  deps: RegenerateDeps,
  cacheKey: CacheKey,
  previous: CacheMeta | undefined,
  meta: CacheMeta,
): Promise<void> {
  await pruneVersions(deps, cacheKey, previous, meta);
  const lost = (previous?.tags ?? []).filter((tag) => !(meta.tags ?? []).includes(tag));
  if (deps.tagIndex === undefined || lost.length === 0) return;
  await deps.tagIndex.remove(cacheKey.tenant, cacheKey.pk, lost).catch((error: unknown) => {
    deps.log?.warn('could not unindex the tags a page lost; a revalidation may mark it', {
      cacheKeyHash: cacheKey.hash,
      error,
    });
  });
}

/**
 * Before a render after a revalidation: the unpublished body goes (the cancelled publish left
 * LOCK ours, so nothing points at it), the mark is lifted from LOCK and the keeper refreshes
 * again. @returns false when the lease is no longer ours
 */
async function startOver(
  deps: RegenerateDeps,
  keeper: LeaseKeeper,
  loose: Loose,
): Promise<boolean> {
  if (loose.body !== undefined) await deleteOrphan(deps, loose.body.s3Key);
  loose.body = undefined;
  if (!(await deps.cacheTable.clearRevalidationMark(keeper.lease))) {
    loose.lockHeld = false;
    return false;
  }
  keeper.restart();
  return true;
}

/** What the policy dropped is logged: a cookie, a tag CloudFront could not use. */
function logDropped(deps: RegenerateDeps, cacheKey: CacheKey, page: AdmittedPage): void {
  if (page.strippedCookies.length > 0) {
    deps.log?.warn('Set-Cookie dropped from a cached page: cookies are per viewer', {
      cacheKeyHash: cacheKey.hash,
      cookies: page.strippedCookies,
    });
  }
  if (page.droppedTags.length > 0) {
    deps.log?.warn('tags dropped from a page: invalid, or past the 49th', {
      cacheKeyHash: cacheKey.hash,
      tags: page.droppedTags,
    });
  }
}

/**
 * Releases a LOCK still held and removes a body no META can point to: a released LOCK makes a
 * body written under it an orphan (see `releaseLease`).
 */
async function settle(deps: RegenerateDeps, lease: Lease, loose: Loose): Promise<void> {
  const released = loose.lockHeld
    ? await releaseLease(deps.cacheTable, lease, { sink: deps.log, what: 'lease' })
    : false;
  if (loose.body !== undefined && (loose.body.fate === 'orphan' || released)) {
    await deleteOrphan(deps, loose.body.s3Key);
  }
}

/** Runs the render inside an admission slot, when there is a cap. @throws RenderOverloadedError */
async function admitted<T>(deps: RegenerateDeps, input: RegenerateInput, render: () => Promise<T>) {
  if (deps.admission === undefined) return render();
  const holdSeconds = Math.ceil(deps.renderTimeoutMs / 1000) + 1;
  const ticket = await deps.admission.enter(epochSeconds(deps.clock), holdSeconds, input.owner);
  if (ticket === undefined) {
    throw new RenderOverloadedError('every render slot is taken; try again shortly');
  }
  try {
    return await render();
  } finally {
    await deps.admission.leave(ticket).catch((error: unknown) => {
      deps.log?.warn('render slot release failed; it expires on its own', { error });
    });
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

function metaFor(
  deps: RegenerateDeps,
  cacheKey: CacheKey,
  page: AdmittedPage,
  stored: { s3Key: string; etag: string; generatedAt: number },
  versions: Pick<CacheMeta, 'currentSk' | 'versionSks' | 'holdUntil'>,
): CacheMeta {
  return {
    ...versions,
    pk: cacheKey.pk,
    s3Key: stored.s3Key,
    generatedAt: stored.generatedAt,
    revalidateSeconds: page.revalidateSeconds,
    etag: stored.etag,
    ttl: metaTtl(
      stored.generatedAt,
      page.revalidateSeconds,
      page.status,
      deps.retention ?? DEFAULT_RETENTION,
    ),
    cacheKey: cacheKey.key,
    contentType: page.contentType,
    statusCode: page.status,
    location: page.location,
    tags: page.tags,
    headers: page.keptHeaders,
    contentLength: page.body.byteLength,
  };
}

/**
 * How long a page's rows are kept once its generation is stale and nobody asks for it. A page
 * that is requested gets regenerated, which moves its TTL forward; one nobody asks for again (a
 * crawler's random path, a removed page) is collected by DynamoDB TTL, its body by the sweeper.
 * Gone pages (404/410) are kept only briefly. TTL is garbage collection, never freshness.
 */
export interface Retention {
  /** After a stale page was last regenerated. */
  readonly idleSeconds: number;
  /** The same for a 404 or 410 page. */
  readonly goneSeconds: number;
}

export const DEFAULT_RETENTION: Retention = {
  idleSeconds: SETTING_DEFAULTS.metaTtlSeconds,
  goneSeconds: SETTING_DEFAULTS.goneTtlSeconds,
};

/** When DynamoDB TTL may collect a META row (see `Retention`). */
export const metaTtl = (
  generatedAt: number,
  revalidateSeconds: number,
  status: number | undefined,
  retention: Retention,
): number =>
  generatedAt +
  revalidateSeconds +
  (status === 404 || status === 410 ? retention.goneSeconds : retention.idleSeconds);

/**
 * Publishes, retrying a transaction cancelled by a conflict (a contender hitting LOCK): the SDK
 * retries throttling and timeouts itself, but never a cancelled transaction.
 */
async function publish(
  deps: RegenerateDeps,
  input: { lease: Lease; meta: CacheMeta; seal: IdempotencySeal | undefined },
): Promise<
  | 'published'
  | LeaseLostError
  | NewerGenerationError
  | RequestAlreadyCompletedError
  | RevalidatedDuringRenderError
> {
  const attempts = deps.publishAttempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.cacheTable.publishGeneration({ ...input, now: epochSeconds(deps.clock) });
      return 'published';
    } catch (error) {
      if (
        error instanceof LeaseLostError ||
        error instanceof NewerGenerationError ||
        error instanceof RequestAlreadyCompletedError ||
        error instanceof RevalidatedDuringRenderError
      ) {
        return error;
      }
      if (!(error instanceof TransactionConflictError) || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt * (1 + Math.random())));
    }
  }
}

async function pruneVersions(
  deps: RegenerateDeps,
  cacheKey: CacheKey,
  previous: CacheMeta | undefined,
  meta: CacheMeta,
): Promise<void> {
  const kept = new Set(meta.versionSks ?? []);
  const dropped = (previous?.versionSks ?? []).filter((sk) => !kept.has(sk));
  if (dropped.length === 0) return;
  try {
    const bodies = await deps.versions.forget(cacheKey.pk, dropped);
    for (const s3Key of bodies) await deleteOrphan(deps, s3Key);
  } catch (error) {
    deps.log?.warn('could not delete the versions a publish dropped; the sweeper will', {
      cacheKeyHash: cacheKey.hash,
      dropped,
      error,
    });
  }
}

/**
 * Retires a body no META or kept version points to (see `BodyStore.deleteBody`). A caller
 * without delete rights (the origin) leaves it to the sweeper, which retires bodies nothing
 * points to once they are older than its safety window.
 */
async function deleteOrphan(deps: RegenerateDeps, s3Key: string) {
  try {
    await deps.bodies.deleteBody(s3Key);
  } catch (error) {
    deps.log?.warn('could not delete an unreferenced body; the sweeper will', { s3Key, error });
  }
}
