/**
 * An operator's rollback of a page (issue: operations) to a kept version, held or not (holds
 * alone: `hold.ts`).
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
import { epochSeconds } from '../clock.js';
import { BodyNotFoundError, VersionRequestError, type LeaseHolder } from '../errors.js';
import { releaseLease } from '../page/lease.js';
import type { CdnPurge } from '../page/ports.js';
import { versionIdOf } from '../page/rows.js';
import { checkHold, liveMeta, purge, seize, ttlOf, type PageOpsDeps } from './page-ops.js';

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
    held: holdUntil === undefined ? undefined : { by: input.actor, at: now },
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
