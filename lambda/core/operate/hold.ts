/**
 * An operator's hold on a page (issue: operations): served as it is, never regenerated, until
 * a time or a release. Both record who asked on META (`held_by`, `released_by`, which `isr
 * inspect` shows) and purge the page from the CDN, so every edge serves what the operator held,
 * and, after a release, what the page regenerates to.
 */
import type { CacheKey } from '../page/model.js';
import { epochSeconds } from '../clock.js';
import type { LeaseHolder } from '../errors.js';
import { releaseLease } from '../page/lease.js';
import type { CdnPurge } from '../page/ports.js';
import { checkHold, liveMeta, purge, seize, ttlOf, type PageOpsDeps } from './page-ops.js';

export interface HoldInput {
  readonly cacheKey: CacheKey;
  readonly holdSeconds: number;
  /** Who asked, for META (`held_by`) and the lease owner. */
  readonly actor: string;
}

export interface HoldResult {
  readonly decision: 'held';
  readonly holdUntil: number;
  readonly by: string;
  readonly tookOver: LeaseHolder | undefined;
  readonly cdn: CdnPurge;
}

/**
 * Holds the page as it is: served, never regenerated, until `holdSeconds` from now or a
 * release. Under a seized lease too, so a regeneration already rendering cannot publish over it.
 * The CDN is purged once the hold is written: a copy it kept of an earlier generation would
 * otherwise be served beside the held one until that copy's s-maxage ends.
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
    await deps.history.hold({
      lease,
      holdUntil,
      ttl,
      expectedGeneratedAt: meta.generatedAt,
      now,
      by: input.actor,
    });
  } catch (error) {
    await releaseLease(deps.cacheTable, lease);
    throw error;
  }
  return {
    decision: 'held',
    holdUntil,
    by: input.actor,
    tookOver: lease.takenOver,
    cdn: await purge(deps, input.cacheKey),
  };
}

export interface ReleaseInput {
  readonly cacheKey: CacheKey;
  /** Who asked, for META (`released_by`). */
  readonly actor: string;
}

export interface ReleaseResult {
  readonly decision: 'released' | 'not-held';
  readonly by: string | undefined;
  readonly cdn: CdnPurge | undefined;
}

/**
 * Lifts a hold: the page is regenerated again as its freshness says. The CDN may have kept the
 * held page until the hold's end (its s-maxage), so it is purged.
 */
export async function release(deps: PageOpsDeps, input: ReleaseInput): Promise<ReleaseResult> {
  const act = { by: input.actor, at: epochSeconds(deps.clock) };
  if (!(await deps.history.release(input.cacheKey.pk, act))) {
    return { decision: 'not-held', by: undefined, cdn: undefined };
  }
  return { decision: 'released', by: input.actor, cdn: await purge(deps, input.cacheKey) };
}
