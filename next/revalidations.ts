/**
 * What an app's `revalidateTag`, `updateTag` and `revalidatePath` become at the service. Next
 * hands the cache handler `revalidateTag(tags, durations?)` for all three (a path arrives as its
 * soft tag `_N_T_/<path>`), with `durations` = `{ expire }` of the cache-life profile, or none.
 */
import { pathOfSoftTag, serviceTagOf } from './tags.js';

/** The endpoint's defaults (ISR_REVALIDATE_MAX_PATHS / _TAGS): a longer list is split. */
export const MAX_PER_REQUEST = 100;

/** A revalidation request body, as the endpoint reads it. */
export interface RevalidationBody {
  readonly paths?: string[];
  readonly tags?: string[];
  readonly tenant?: string;
  readonly mode: 'stale' | 'expire';
  readonly regenerate?: boolean;
}

/** What Next passes as `durations`: only `expire` (seconds) is ever set. */
export interface Durations {
  readonly expire?: number;
}

/**
 * The mode: no durations, or `expire: 0` (`updateTag`, `revalidatePath`, `revalidateTag(t,
 * { expire: 0 })`), means the old page must never be served again: `expire`. Any other
 * durations (`revalidateTag(t, 'max')`) mean stale-while-revalidate: `stale`, regenerated now,
 * so viewers get the new page within seconds without ever waiting for a render.
 */
export function modeOf(
  durations: Durations | undefined,
): Pick<RevalidationBody, 'mode' | 'regenerate'> {
  return durations === undefined || durations.expire === 0
    ? { mode: 'expire' }
    : { mode: 'stale', regenerate: true };
}

const unique = (values: string[]): string[] => [...new Set(values)];

/**
 * Next's tags as the service's tags and paths: every tag by tag (soft tags included, so a layout
 * or route revalidation finds the pages that carry it), and a soft tag that names a URL path by
 * path too (so a page rendered before it carried its tags, and every variant of the path, is
 * reached). Over-purging is safe; missing a page is not.
 */
export function targetsOf(tags: readonly string[]): { paths: string[]; tags: string[] } {
  const paths = tags.map(pathOfSoftTag).filter((path) => path !== undefined);
  // Next joins a page's tags with commas, so a tag holding one reaches the page as its parts.
  const parts = tags.flatMap((tag) => (tag.includes(',') ? tag.split(',') : []));
  const all = [...tags, ...parts.map((part) => part.trim()).filter((part) => part !== '')];
  return { paths: unique(paths), tags: unique(all.map(serviceTagOf)) };
}

function chunk<T>(values: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let at = 0; at < values.length; at += size) chunks.push(values.slice(at, at + size));
  return chunks;
}

/** The request bodies of one `revalidateTag` call: one, unless its lists exceed the limits. */
export function revalidationBodiesOf(
  tags: string | readonly string[],
  durations: Durations | undefined,
  tenant: string | undefined,
): RevalidationBody[] {
  const targets = targetsOf(typeof tags === 'string' ? [tags] : tags);
  const mode = modeOf(durations);
  const pathChunks = chunk(targets.paths, MAX_PER_REQUEST);
  const tagChunks = chunk(targets.tags, MAX_PER_REQUEST);
  const bodies: RevalidationBody[] = [];
  for (let at = 0; at < Math.max(pathChunks.length, tagChunks.length); at++) {
    const paths = pathChunks[at] ?? [];
    const chunkTags = tagChunks[at] ?? [];
    bodies.push({
      ...(paths.length > 0 ? { paths } : {}),
      ...(chunkTags.length > 0 ? { tags: chunkTags } : {}),
      ...(tenant === undefined ? {} : { tenant }),
      ...mode,
    });
  }
  return bodies;
}
