/**
 * An operator's hand on a page (issue: operations): roll it back to a kept version, hold it
 * (no regeneration until a time), lift the hold.
 *
 * Rollback is the one write allowed to go back to older content. It is explicit (a person asks
 * for it, by version), checked against the META it read (a publish or another rollback in
 * between refuses it, nothing written), and done under the page's lease, seized from whoever
 * held it: a regeneration in flight loses its token and can neither refresh nor publish, so it
 * cannot undo the rollback. The rolled-back META gets `generated_at = max(now, previous + 1)`:
 * freshness restarts, and `Last-Modified` moves forward, so a client that revalidates with
 * `If-Modified-Since` gets the restored page, never a 304 for the one it replaced.
 */
import type { CacheKey, AcquiredLease, CacheMeta, PageVersion } from '../page/model.js';
import { cdnKeyTagOf } from '../page/cache-tags.js';
import { epochSeconds, type Clock } from '../clock.js';
import { BodyNotFoundError, VersionRequestError, type LeaseHolder } from '../errors.js';
import { releaseLease, seizeLease } from '../page/lease.js';
import type { BodyStore, CacheTable, CdnInvalidator, CdnPurge, TagIndex } from '../page/ports.js';
import type { PageHistory } from './ports.js';
import { DEFAULT_RETENTION, metaTtl, type Retention } from '../retention.js';
import { versionIdOf } from '../page/rows.js';

export interface PageOpsDeps {
  readonly cacheTable: Pick<CacheTable, 'getMeta' | 'acquireLease' | 'releaseLease'>;
  readonly history: PageHistory;
  readonly bodies: Pick<BodyStore, 'getBody'>;
  /** Purges the page from the CDN; without one, the CDN keeps its copy until it expires. */
  readonly cdn?: CdnInvalidator | undefined;
  /** Keeps the tag index right when the restored version carries other tags. */
  readonly tagIndex?: TagIndex | undefined;
  readonly clock: Clock;
  /** How long the operator's seized lease lasts: the write must land within it. */
  readonly leaseSeconds: number;
  readonly retention?: Retention | undefined;
}

export interface RollbackInput {
  readonly cacheKey: CacheKey;
  /** A kept version's id (`isr inspect` lists them), or a unique prefix of one; default: the one before the live one. */
  readonly to?: string | undefined;
  /** Also hold the page this long (no regeneration). */
  readonly holdSeconds?: number | undefined;
  /** Who asked, for META (`rolled_back_by`) and the log. */
  readonly actor: string;
}

export interface RollbackResult {
  readonly decision: 'rolled-back';
  readonly from: string | undefined;
  readonly to: string;
  readonly meta: CacheMeta;
  readonly holdUntil: number | undefined;
  /** The regeneration (or operator) whose lease was seized, if one was in flight. */
  readonly tookOver: LeaseHolder | undefined;
  readonly cdn: CdnPurge;
}

export async function rollback(deps: PageOpsDeps, input: RollbackInput): Promise<RollbackResult> {
  const { cacheKey } = input;
  if (input.holdSeconds !== undefined) checkHold(input.holdSeconds);
  const meta = await liveMeta(deps, cacheKey);
  const kept = meta.versionSks ?? [];
  if (kept.length === 0 || meta.currentSk === undefined) {
    throw new VersionRequestError(
      'no-versions',
      `${cacheKey.key} has no kept versions (published before versions were kept, or by a writer that does not keep them)`,
    );
  }
  const targetSk = input.to === undefined ? olderThanLive(meta) : resolveVersion(kept, input.to);
  if (targetSk === meta.currentSk) {
    throw new VersionRequestError(
      'already-live',
      `version ${versionIdOf(targetSk)} is already live`,
    );
  }
  const version = await deps.history.version(cacheKey.pk, targetSk);
  if (version === undefined) {
    throw new VersionRequestError(
      'version-not-kept',
      `version ${versionIdOf(targetSk)} of ${cacheKey.key} is listed but its row is gone`,
    );
  }
  await deps.bodies.getBody(version.s3Key).catch((error: unknown) => {
    if (!(error instanceof BodyNotFoundError)) throw error;
    throw new VersionRequestError(
      'version-body-missing',
      `the body of version ${versionIdOf(targetSk)} (${version.s3Key}) is missing; nothing was changed`,
      { cause: error },
    );
  });
  const now = epochSeconds(deps.clock);
  const holdUntil = input.holdSeconds === undefined ? undefined : now + input.holdSeconds;
  const generatedAt = Math.max(now, meta.generatedAt + 1);
  const next: CacheMeta = {
    ...generationOf(version),
    generatedAt,
    ttl: ttlOf(deps, { ...version, generatedAt }, holdUntil),
    currentSk: targetSk,
    versionSks: kept,
    holdUntil,
    rolledBack: { fromSk: meta.currentSk, at: now, by: input.actor },
  };
  const lease = await seize(deps, cacheKey, input.actor, 'rollback');
  // Indexed under the seized lease: a removal landing before the restore sees LOCK and keeps them.
  await restoreOrRelease(deps, lease, next, meta, () => indexTags(deps, cacheKey, meta, version));
  await unindexTags(deps, cacheKey, meta, version);
  return {
    decision: 'rolled-back',
    from: meta.currentSk,
    to: targetSk,
    meta: next,
    holdUntil,
    tookOver: lease.takenOver,
    cdn: await purge(deps, cacheKey),
  };
}

export interface HoldInput {
  readonly cacheKey: CacheKey;
  readonly holdSeconds: number;
  readonly actor: string;
}

export interface HoldResult {
  readonly decision: 'held';
  readonly holdUntil: number;
  readonly tookOver: LeaseHolder | undefined;
}

/**
 * Holds the page as it is: served, never regenerated, until `holdSeconds` from now or a
 * release. Under a seized lease too, so a regeneration already rendering cannot publish over it.
 */
export async function hold(deps: PageOpsDeps, input: HoldInput): Promise<HoldResult> {
  checkHold(input.holdSeconds);
  const meta = await liveMeta(deps, input.cacheKey);
  const now = epochSeconds(deps.clock);
  const holdUntil = now + input.holdSeconds;
  const lease = await seize(deps, input.cacheKey, input.actor, 'hold');
  // The hold alone is written: a revalidation that marks META meanwhile stays marked.
  const ttl = ttlOf(deps, meta, holdUntil);
  try {
    await deps.history.hold({ lease, holdUntil, ttl, expectedGeneratedAt: meta.generatedAt, now });
  } catch (error) {
    await releaseLease(deps.cacheTable, lease);
    throw error;
  }
  return { decision: 'held', holdUntil, tookOver: lease.takenOver };
}

export interface ReleaseResult {
  readonly decision: 'released' | 'not-held';
  readonly cdn: CdnPurge | undefined;
}

/**
 * Lifts a hold: the page is regenerated again as its freshness says. The CDN may have kept the
 * held page until the hold's end, so it is purged.
 */
export async function release(
  deps: PageOpsDeps,
  input: { readonly cacheKey: CacheKey },
): Promise<ReleaseResult> {
  if (!(await deps.history.release(input.cacheKey.pk)))
    return { decision: 'not-held', cdn: undefined };
  return { decision: 'released', cdn: await purge(deps, input.cacheKey) };
}

/**
 * A kept version named by its id, its sort key, or a unique prefix of its id.
 * @throws VersionRequestError when none or several match
 */
export function resolveVersion(kept: readonly string[], wanted: string): string {
  const exact = kept.find((sk) => sk === wanted || versionIdOf(sk) === wanted);
  if (exact !== undefined) return exact;
  const matches = kept.filter((sk) => versionIdOf(sk).startsWith(wanted));
  if (matches.length === 1) return matches[0];
  const ids = kept.map(versionIdOf).join(', ');
  if (matches.length === 0) {
    throw new VersionRequestError(
      'version-not-kept',
      `no kept version matches ${wanted}; kept: ${ids}`,
    );
  }
  throw new VersionRequestError(
    'ambiguous-version',
    `${wanted} matches ${matches.length} kept versions; give more of the id (kept: ${ids})`,
  );
}

/** The newest kept version published before the live one. */
function olderThanLive(meta: CacheMeta): string {
  const kept = meta.versionSks ?? [];
  const live = kept.indexOf(meta.currentSk ?? '');
  const older = live < 0 ? undefined : kept[live + 1];
  if (older === undefined) {
    throw new VersionRequestError(
      'nothing-older',
      `no kept version is older than the live one (${versionIdOf(meta.currentSk ?? '')}): a ` +
        'history starts at the first render, and again after an `expire` revalidation (a ' +
        'takedown is never rolled back to)',
    );
  }
  return older;
}

async function liveMeta(deps: PageOpsDeps, cacheKey: CacheKey): Promise<CacheMeta> {
  const meta = await deps.cacheTable.getMeta(cacheKey.pk, { consistent: true });
  if (meta === undefined) {
    throw new VersionRequestError('page-not-found', `${cacheKey.key} has no published page`);
  }
  return meta;
}

const seize = (
  deps: PageOpsDeps,
  cacheKey: CacheKey,
  actor: string,
  what: string,
): Promise<AcquiredLease> =>
  seizeLease(deps.cacheTable, {
    pk: cacheKey.pk,
    now: epochSeconds(deps.clock),
    durationSeconds: deps.leaseSeconds,
    owner: `${what}:${actor}`,
  });

/**
 * The operator's write, after `before` (under the same lease); on a refusal the seized lease is
 * released (best-effort: it expires).
 */
async function restoreOrRelease(
  deps: PageOpsDeps,
  lease: AcquiredLease,
  meta: CacheMeta,
  expected: CacheMeta,
  before?: () => Promise<void>,
): Promise<void> {
  try {
    await before?.();
    await deps.history.restore({ lease, meta, expected, now: epochSeconds(deps.clock) });
  } catch (error) {
    await releaseLease(deps.cacheTable, lease);
    throw error;
  }
}

/** A version's generation attributes, as META carries them (no row key, no failure record). */
function generationOf(version: PageVersion): CacheMeta {
  return {
    pk: version.pk,
    s3Key: version.s3Key,
    generatedAt: version.generatedAt,
    revalidateSeconds: version.revalidateSeconds,
    etag: version.etag,
    cacheKey: version.cacheKey,
    contentType: version.contentType,
    statusCode: version.statusCode,
    location: version.location,
    tags: version.tags,
    headers: version.headers,
    contentLength: version.contentLength,
  };
}

/**
 * Longest hold: a pause an operator means to lift, not a way to freeze a page (a typo such as
 * `100000d` would also keep its rows for centuries).
 */
export const MAX_HOLD_SECONDS = 30 * 86_400;

function checkHold(seconds: number): void {
  if (Number.isInteger(seconds) && seconds > 0 && seconds <= MAX_HOLD_SECONDS) return;
  throw new VersionRequestError(
    'hold-out-of-bounds',
    `a hold lasts 1 s to ${MAX_HOLD_SECONDS / 86_400} days, got ${seconds} s`,
  );
}

/** META's TTL: the usual one after its freshness, and never before a hold ends. */
function ttlOf(deps: PageOpsDeps, meta: CacheMeta, holdUntil: number | undefined): number {
  const retention = deps.retention ?? DEFAULT_RETENTION;
  const usual = metaTtl(meta.generatedAt, meta.revalidateSeconds, meta.statusCode, retention);
  return Math.max(
    usual,
    meta.ttl ?? 0,
    holdUntil === undefined ? 0 : holdUntil + retention.idleSeconds,
  );
}

/** Tags the restored version carries and the live one does not are indexed before the write. */
async function indexTags(deps: PageOpsDeps, key: CacheKey, live: CacheMeta, version: PageVersion) {
  const gained = (version.tags ?? []).filter((tag) => !(live.tags ?? []).includes(tag));
  if (deps.tagIndex !== undefined && gained.length > 0) {
    await deps.tagIndex.add(key.tenant, key.pk, gained);
  }
}

/** Tags only the replaced page carried leave the index (best-effort, as after a publish). */
async function unindexTags(
  deps: PageOpsDeps,
  key: CacheKey,
  live: CacheMeta,
  version: PageVersion,
) {
  const lost = (live.tags ?? []).filter((tag) => !(version.tags ?? []).includes(tag));
  if (deps.tagIndex !== undefined && lost.length > 0) {
    await deps.tagIndex.remove(key.tenant, key.pk, lost).catch(() => undefined);
  }
}

const purge = (deps: PageOpsDeps, cacheKey: CacheKey): Promise<CdnPurge> =>
  deps.cdn === undefined
    ? Promise.resolve({ status: 'not-configured' })
    : deps.cdn.invalidateTags([cdnKeyTagOf(cacheKey)]);
