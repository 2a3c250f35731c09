/**
 * CDN purges by cache tag, written once for every CDN adapter: which items one purge sends,
 * its identity (CloudFront's CallerReference), and how long to back off while the CDN is saturated
 * (the sweeper's flush of purges recorded as pending is `operate/pending-purges.ts`).
 *
 * Sources (CloudFront Developer Guide, 2026): "What you need to know when invalidating tags"
 * (items are `#tag`, ASCII 33-126 without commas, at most 256 characters, case-insensitive; each
 * tag item counts as one invalidation path) and "Concurrent invalidation request maximum"
 * (at most 3,000 individual paths in progress per distribution, so one invalidation never
 * carries more; past it CreateInvalidation fails with TooManyInvalidationsInProgress).
 */
import { sha256Hex } from './page/cache-key.js';
import { CdnPurgeRejectedError } from './errors.js';

/** CloudFront tells a tag item from a path by this prefix. */
export const CDN_TAG_ITEM_PREFIX = '#';
/** Paths (tag items) one distribution may have in progress, so the most one invalidation carries. */
export const MAX_TAGS_PER_INVALIDATION = 3000;
/** CloudFront's longest cache tag. */
const MAX_CDN_TAG_LENGTH = 256;
const VISIBLE_ASCII_NO_COMMA = /^[\x21-\x2b\x2d-\x7e]+$/;

/** Why CloudFront would refuse this tag, or undefined when it accepts it. */
export function cdnTagProblem(tag: string): string | undefined {
  if (tag.length === 0 || tag.length > MAX_CDN_TAG_LENGTH) {
    return `a CDN tag has 1 to ${MAX_CDN_TAG_LENGTH} characters`;
  }
  if (!VISIBLE_ASCII_NO_COMMA.test(tag))
    return 'a CDN tag is visible ASCII (33-126) without commas';
  return undefined;
}

/**
 * The tags one purge sends: lower-cased (CloudFront compares them case-insensitively), each
 * once, sorted so the same set always makes the same purge identity. An invalid tag is refused
 * before anything is sent: CloudFront would refuse the whole invalidation.
 */
export function purgeTagsOf(tags: readonly string[]): string[] {
  const unique = new Set<string>();
  for (const raw of tags) {
    const tag = raw.startsWith(CDN_TAG_ITEM_PREFIX) ? raw.slice(1) : raw;
    const problem = cdnTagProblem(tag);
    if (problem !== undefined) {
      throw new CdnPurgeRejectedError(undefined, `cannot purge ${JSON.stringify(raw)}: ${problem}`);
    }
    unique.add(tag.toLowerCase());
  }
  return [...unique].sort();
}

/** Consecutive slices of at most `size` items. */
export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) {
    chunks.push(items.slice(start, start + size));
  }
  return chunks;
}

/**
 * A purge's identity: from its tags and the effects it carries, so a retried effect sends the
 * same CallerReference and CloudFront returns the invalidation it already made. A purge with no
 * effect gets a `nonce`: the same tags purged again later must make a new invalidation.
 */
export function purgeIdOf(
  tags: readonly string[],
  identity: { readonly effectIds: readonly string[] } | { readonly nonce: string },
): string {
  const of =
    'nonce' in identity
      ? `nonce:${identity.nonce}`
      : `effects:${[...new Set(identity.effectIds)].sort().join('\n')}`;
  return `isr-${sha256Hex(`${[...tags].sort().join('\n')}|${of}`).slice(0, 48)}`;
}

/** How a throttled purge backs off before it is recorded as pending. */
export interface PurgeBackoff {
  /** Wait before the first retry; each further retry doubles it, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Time from the first attempt after which the purge is recorded as pending instead. */
  readonly budgetMs: number;
}

/**
 * Tag invalidations complete in under 25 s at P95 (AWS, April 2026), which is when a slot frees
 * up: waiting up to 20 s covers most, and keeps a revalidation's 202 well inside its timeout.
 */
export const DEFAULT_PURGE_BACKOFF: PurgeBackoff = {
  baseDelayMs: 500,
  maxDelayMs: 8000,
  budgetMs: 20_000,
};

/** Wait before retry `attempt` (1-based), with equal jitter so concurrent purges spread out. */
export function purgeDelayMs(attempt: number, policy: PurgeBackoff, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
