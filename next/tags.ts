/**
 * Next.js tags, as the service can hold them. Next's tags are exact strings of any characters
 * (`Posts`, `_N_T_/blog/[slug]/page`, `my tag`); the service keeps CloudFront's cache tags (visible
 * ASCII without commas, at most 191 characters, compared case-insensitively, so lower-cased). The
 * same mapping runs on a page's tags and on a revalidation's, so both always meet.
 */
import { createHash } from 'node:crypto';
import { MAX_TAGS_PER_PAGE, tagProblem } from '../lambda/core/page/cache-tags.js';

/** Next's prefix of the implicit ("soft") tags it derives from a page's path and route. */
export const SOFT_TAG_PREFIX = '_N_T_/';
/** The prefix of a tag the CDN cannot carry as is, followed by 32 hex of its SHA-256. */
export const HASHED_TAG_PREFIX = 'next-hash:';

/**
 * The service's tag for a Next.js tag: the tag itself when the CDN can carry it (the service
 * lower-cases it, so `Posts` and `posts` meet: over-purging, never under-purging), else a digest
 * of the exact tag (spaces, commas, non-ASCII, over 191 characters).
 */
export function serviceTagOf(tag: string): string {
  if (tagProblem(tag) === undefined) return tag;
  return `${HASHED_TAG_PREFIX}${createHash('sha256').update(tag, 'utf8').digest('hex').slice(0, 32)}`;
}

const isSoft = (tag: string): boolean => tag.startsWith(SOFT_TAG_PREFIX);

/**
 * The tags a page gives the service, from the `x-next-cache-tags` Next hands `set()`: its own
 * tags first (the service keeps at most 49, so they are never the ones dropped), then its soft
 * tags, each mapped, without duplicates as the service compares them.
 */
export function pageTagsOf(nextCacheTags: string): string[] {
  const tags = nextCacheTags
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '');
  const ordered = [...tags.filter((tag) => !isSoft(tag)), ...tags.filter(isSoft)];
  const seen = new Set<string>();
  const kept: string[] = [];
  for (const tag of ordered.map(serviceTagOf)) {
    if (seen.has(tag.toLowerCase())) continue;
    seen.add(tag.toLowerCase());
    kept.push(tag);
  }
  return kept.slice(0, MAX_TAGS_PER_PAGE);
}

/** Characters a path may carry as is; anything else is percent-encoded (UTF-8). */
const PATH_SAFE = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/gu;

/**
 * The URL path a soft tag names, or undefined for a route pattern: `_N_T_/<path>` is the page's
 * path, while `…/layout`, `…/page` and `[param]` ones name routes (every page under a layout, or
 * of a route), which only the tags the pages carry can find. `_N_T_/index` is `/`.
 */
export function pathOfSoftTag(tag: string): string | undefined {
  if (!isSoft(tag)) return undefined;
  const path = tag.slice(SOFT_TAG_PREFIX.length - 1);
  if (path === '/index') return '/';
  if (path.includes('[') || /(^|\/)(layout|page)$/.test(path)) return undefined;
  return path.replace(PATH_SAFE, (char) => encodeURIComponent(char));
}
