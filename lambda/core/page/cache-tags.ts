/**
 * Page tags and the cache tags the CDN sees, in one place. A renderer tags pages (`post:42`,
 * `demo`); a revalidation names tags. CloudFront invalidates by cache tag (`#tag` items) when
 * the origin sends them in a header: its rules apply to what it sees, ASCII 33-126 without
 * commas, at most 256 characters, at most 50 per object, case-insensitive. Tags are scoped to
 * the tenant: the CDN sees `<tenant>/<tag>` (`_` single-tenant), so a purge in one tenant never
 * reaches another; every page also carries a per-key tag, so purging a path is a tag purge too.
 */
import type { CacheKey } from './model.js';

/** CloudFront processes at most 50 tags per cached object; one is the page's own key tag. */
export const MAX_TAGS_PER_PAGE = 49;
/** CloudFront's longest tag. */
export const MAX_CDN_TAG_LENGTH = 256;
/** The longest tenant (64) and its `/`: a page tag keeps the scoped CDN tag within 256. */
export const MAX_TAG_LENGTH = MAX_CDN_TAG_LENGTH - 65;

const VISIBLE_ASCII_NO_COMMA = /^[\x21-\x2b\x2d-\x7e]+$/;

/** Why a tag cannot be used, or undefined when it can. */
export function tagProblem(tag: string): string | undefined {
  if (tag.length === 0) return 'a tag must not be empty';
  if (tag.length > MAX_TAG_LENGTH) return `a tag is at most ${MAX_TAG_LENGTH} characters`;
  if (!VISIBLE_ASCII_NO_COMMA.test(tag)) {
    return 'a tag is visible ASCII (33-126) without commas or spaces';
  }
  return undefined;
}

/** Tags compare case-insensitively (as CloudFront does): they are kept lower-case. */
export const normaliseTag = (tag: string): string => tag.toLowerCase();

/**
 * A renderer's tags, made usable: lower-cased, deduplicated, each valid; invalid ones and those
 * past the 49th are dropped, and reported so the caller can log them.
 */
export function pageTags(tags: readonly string[] | undefined): {
  readonly kept: readonly string[];
  readonly dropped: readonly string[];
} {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const raw of tags ?? []) {
    const tag = normaliseTag(raw.trim());
    if (kept.includes(tag)) continue;
    if (tagProblem(tag) !== undefined || kept.length >= MAX_TAGS_PER_PAGE) dropped.push(raw);
    else kept.push(tag);
  }
  return { kept, dropped };
}

const scope = (tenant: string | undefined): string => tenant ?? '_';

/** The CDN tag of a page tag, within its tenant. */
export const cdnTagOf = (tenant: string | undefined, tag: string): string =>
  `${scope(tenant)}/${normaliseTag(tag)}`;

/**
 * The CDN tag every page of a cache key carries: purging a path purges this tag. A variant
 * carries its page's, so the purge reaches every variant the CDN holds.
 */
export const cdnKeyTagOf = (cacheKey: Pick<CacheKey, 'tenant' | 'hash' | 'pageHash'>): string =>
  `${scope(cacheKey.tenant)}/key:${(cacheKey.pageHash ?? cacheKey.hash).slice(0, 40)}`;

/** The cache-tag header value of a page: its tags, then its key tag. */
export const cdnTagsOfPage = (
  cacheKey: Pick<CacheKey, 'tenant' | 'hash' | 'pageHash'>,
  tags: readonly string[] | undefined,
): string[] => [
  ...(tags ?? []).map((tag) => cdnTagOf(cacheKey.tenant, tag)),
  cdnKeyTagOf(cacheKey),
];
