/**
 * The rows around a publish that are not in its transaction: the tag index, kept ahead of the
 * publish for tags a page gains (so a revalidation cannot miss a published page) and behind it
 * for tags it loses, and the versions a publish drops from META's list.
 */
import type { CacheKey, CacheMeta } from '../page/model.js';
import type { AdmittedPage } from './render-policy.js';
import type { RegenerateDeps } from './deps.js';
import { retireBody } from './retire.js';

/**
 * Indexes the page under the tags it did not carry before, then tells whether one of them was
 * revalidated since the render started (or within the clock-skew margin before): a revalidation
 * that ran before the index rows existed could not find this page, so its render is redone.
 * A revalidation this lease already rendered again for (`seen`) does not count twice.
 */
export async function indexGainedTags(
  deps: Pick<RegenerateDeps, 'tagIndex' | 'clockSkewMarginSeconds'>,
  cacheKey: CacheKey,
  current: CacheMeta | undefined,
  page: AdmittedPage,
  render: { readonly renderStartedMs: number; readonly seen: Map<string, number> },
): Promise<boolean> {
  const gained = (page.tags ?? []).filter((tag) => !(current?.tags ?? []).includes(tag));
  if (deps.tagIndex === undefined || gained.length === 0) return false;
  await deps.tagIndex.add(cacheKey.tenant, cacheKey.pk, gained);
  const revalidated = await deps.tagIndex.revalidatedAt(cacheKey.tenant, gained);
  const since = render.renderStartedMs - (deps.clockSkewMarginSeconds ?? 0) * 1000;
  let racing = false;
  for (const [tag, atMs] of revalidated) {
    if (atMs >= since && render.seen.get(tag) !== atMs) racing = true;
    render.seen.set(tag, atMs);
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
export async function afterPublish(
  deps: Pick<RegenerateDeps, 'tagIndex' | 'versions' | 'bodies' | 'log'>,
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

async function pruneVersions(
  deps: Pick<RegenerateDeps, 'versions' | 'bodies' | 'log'>,
  cacheKey: CacheKey,
  previous: CacheMeta | undefined,
  meta: CacheMeta,
): Promise<void> {
  const kept = new Set(meta.versionSks ?? []);
  const dropped = (previous?.versionSks ?? []).filter((sk) => !kept.has(sk));
  if (dropped.length === 0) return;
  try {
    const bodies = await deps.versions.forget(cacheKey.pk, dropped);
    for (const s3Key of bodies) await retireBody(deps, s3Key);
  } catch (error) {
    deps.log?.warn('could not delete the versions a publish dropped; the sweeper will', {
      cacheKeyHash: cacheKey.hash,
      dropped,
      error,
    });
  }
}
