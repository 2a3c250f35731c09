/**
 * What a revalidation's 202 promises, checked two ways (docs/REVALIDATION.md, "How the origin
 * honours a 202"): by every viewer's answer in the log, and by the rows at every step (what an
 * origin starting now, with a fresh read of the in-progress rows, would answer). A generation is
 * covered by a revalidation when it carries one of its tags (or its page was named by path); it
 * is older when its render began in the log before the revalidation's request did.
 */
import { isFresh, isHeld } from '../../lambda/core/page/freshness.js';
import type { CacheMeta } from '../../lambda/core/page/model.js';
import {
  inProgressVerdict,
  InProgressVerdict,
  type InProgressState,
} from '../../lambda/core/page/in-progress.js';
import { tenantOfPk } from './tenants.js';
import type { ModelEvent } from './world.js';

type Revalidated = Extract<ModelEvent, { kind: 'revalidated' }>;
type Served = Extract<ModelEvent, { kind: 'served' }>;

/** Where in the log `content` was rendered (a seed's: where its body was written), or -1. */
function contentRenderedAt(log: readonly ModelEvent[], content: string): number {
  const render = log.findIndex((event) => event.kind === 'render' && event.content === content);
  if (render >= 0) return render;
  return log.findIndex((event) => event.kind === 'body' && event.content === content);
}

/**
 * Where in the log the generation whose body is `s3Key` was rendered (its body, for a seed): the
 * last body written there (a render done again under one lease writes its body key again).
 */
function renderedAt(log: readonly ModelEvent[], s3Key: string): number {
  const body = log.findLast((event) => event.kind === 'body' && event.s3Key === s3Key);
  return body?.kind === 'body' ? contentRenderedAt(log, body.content) : -1;
}

/** The tags a generation was rendered with (a seed's: none). */
function tagsOf(log: readonly ModelEvent[], content: string): string[] {
  const render = log.find((event) => event.kind === 'render' && event.content === content);
  return render?.kind === 'render' ? render.tags : [];
}

/** A tag revalidation covers its own tenant's pages only: tenants share tag names, not pages. */
const covers = (revalidation: Revalidated, pk: string, tags: readonly string[]): boolean =>
  revalidation.tags.length === 0
    ? revalidation.pks.includes(pk)
    : revalidation.tenant === tenantOfPk(pk) && revalidation.tags.some((tag) => tags.includes(tag));

/** An operator restored the page between two points of the log (a rollback is the exception). */
const restoredBetween = (log: readonly ModelEvent[], from: number, to: number, pk: string) =>
  log.slice(from, to).some((event) => event.kind === 'restore' && event.pk === pk);

/** Whether an operator's hold on `pk` was in force (by `now`) at some point of [from, to]. */
function heldBetween(log: readonly ModelEvent[], pk: string, span: [number, number], now: number) {
  let holdUntil: number | undefined;
  let held = false;
  for (const [index, event] of log.slice(0, span[1]).entries()) {
    if (index >= span[0] && holdUntil !== undefined && now < holdUntil) held = true;
    if (!('pk' in event) || event.pk !== pk) continue;
    if (event.kind === 'hold' || event.kind === 'restore') holdUntil = event.holdUntil;
    if (event.kind === 'unhold' || event.kind === 'expire' || event.kind === 'publish')
      holdUntil = undefined;
  }
  return held || (holdUntil !== undefined && now < holdUntil);
}

/**
 * No viewer request that began after a revalidation's 202 got, from a generation it covers
 * rendered before it: a HIT (`stale`, a held page aside), or any body at all (`expire`, a
 * takedown that beats a hold). @returns the first violation
 */
export function checkViewers(log: readonly ModelEvent[]): string | undefined {
  for (const [index, event] of log.entries()) {
    if (event.kind !== 'revalidated') continue;
    for (const [at, served] of log.entries()) {
      if (served.kind !== 'served' || served.from <= index) continue;
      const violation = viewerViolation(log, event, index, served, at);
      if (violation !== undefined) return violation;
    }
  }
  return undefined;
}

function viewerViolation(
  log: readonly ModelEvent[],
  revalidation: Revalidated,
  index: number,
  served: Served,
  at: number,
): string | undefined {
  if (served.content === undefined) return undefined;
  if (!covers(revalidation, served.pk, tagsOf(log, served.content))) return undefined;
  const rendered = contentRenderedAt(log, served.content);
  if (rendered < 0 || rendered >= revalidation.from) return undefined;
  if (restoredBetween(log, revalidation.from, at, served.pk)) return undefined;
  const what = `${JSON.stringify(served.content)} (rendered at log ${rendered})`;
  if (revalidation.mode === 'expire') {
    return `${served.actor} was served ${what} after ${revalidation.actor}'s expire answered (log ${index})`;
  }
  if (served.cache !== 'HIT') return undefined;
  if (heldBetween(log, served.pk, [served.from, at], served.now)) return undefined;
  return `${served.actor} got a HIT of ${what}, a request begun at log ${served.from} after ${revalidation.actor}'s 202 (log ${index})`;
}

/** What an origin starting now answers from `meta` and one shard of the in-progress rows. */
function answersHit(
  meta: CacheMeta,
  state: InProgressState,
  now: number,
  marginSeconds: number,
): boolean {
  const verdict = inProgressVerdict(meta, state, marginSeconds);
  if (verdict === InProgressVerdict.Expire) return false;
  return isHeld(meta, now) || (verdict === undefined && isFresh(meta, now));
}

/**
 * After a revalidation's 202, no origin starting now (whichever shard it reads) would answer a
 * HIT from a generation it covers rendered before it began; for `stale`, a held page aside. A
 * page rolled back since is the exception. @returns the first violation
 */
export function checkRows(
  log: readonly ModelEvent[],
  metas: ReadonlyMap<string, CacheMeta | undefined>,
  /** The in-progress rows of each shard, of `pk`'s tenant. */
  shardsOf: (pk: string) => readonly InProgressState[],
  at: { readonly nowSeconds: number; readonly marginSeconds: number },
): string | undefined {
  for (const [index, event] of log.entries()) {
    if (event.kind !== 'revalidated') continue;
    for (const [pk, meta] of metas) {
      if (meta === undefined || !covers(event, pk, meta.tags ?? [])) continue;
      const rendered = renderedAt(log, meta.s3Key);
      if (rendered < 0 || rendered >= event.from) continue;
      if (restoredBetween(log, event.from, log.length, pk)) continue;
      if (event.mode === 'stale' && isHeld(meta, at.nowSeconds)) continue;
      const shard = shardsOf(pk).findIndex((state) =>
        answersHit(meta, state, at.nowSeconds, at.marginSeconds),
      );
      if (shard < 0) continue;
      return `after ${event.actor}'s 202 (log ${index}), ${pk} is fresh with ${meta.s3Key}, rendered at log ${rendered} before it began (log ${event.from}), and shard ${shard} of the in-progress rows does not cover it`;
    }
  }
  return undefined;
}

/**
 * After a revalidation by path, none of its pages (the path's key and its variants) keeps a
 * hit-for-pass mark written before its request began: the caller says the page changed, so its
 * next request renders it again (issue 33, fix 3). A mark written since is a new render's.
 * @returns the first violation
 */
export function checkPassMarks(
  log: readonly ModelEvent[],
  marked: ReadonlyMap<string, boolean>,
): string | undefined {
  for (const [index, event] of log.entries()) {
    if (event.kind !== 'revalidated' || event.tags.length > 0) continue;
    for (const pk of event.pks) {
      if (marked.get(pk) !== true) continue;
      const last = log.findLastIndex((other) => other.kind === 'pass' && other.pk === pk);
      if (last < 0 || last >= event.from) continue;
      return `after ${event.actor}'s revalidation by path (log ${index}), ${pk} keeps the hit-for-pass mark written at log ${last}, before its request began (log ${event.from})`;
    }
  }
  return undefined;
}
