/**
 * `POST <revalidate URL>/tag-times`: when each tag of a batch was last revalidated (the `STATE`
 * rows every revalidation writes first), for a framework's data cache (`facetheory-isr/next`)
 * that trusts an entry only while none of its tags was revalidated since the entry was made.
 * Same authentication as a revalidation (the signed string covers method, path and body); a read,
 * so no Idempotency-Key. The answer says how long it may be reused: as long as origins reuse their
 * in-progress reads, which the 202 waits out after writing the tag times (`fan-out.ts`), so a
 * request that starts after a 202 never trusts a read from before it.
 */
import type { TagIndex } from '../page/ports.js';
import {
  canonicalRevalidation,
  revalidateBodyFields,
  RevalidateRequestError,
  type RevalidatePolicy,
} from './request.js';

/** The path segment under the revalidate endpoint: `/_isr/revalidate/tag-times`. */
export const TAG_TIMES_SEGMENT = 'tag-times';

/** When tags were last revalidated: the tag index's read (tags revalidated long ago are absent). */
export type TagTimesReader = Pick<TagIndex, 'revalidatedAt'>;

export interface TagTimesDeps {
  readonly reader: TagTimesReader;
  /** How long a reader may reuse an answer: the origins' in-progress cache (`inProgressCacheMs`). */
  readonly cacheMs: number;
  /** The clock difference a reader allows between its clock and the service's. */
  readonly skewMarginMs: number;
  /** How long a tag's time is kept (its `STATE` row's TTL): older entries cannot be checked. */
  readonly keptMs: number;
}

/** The answer's body, as the adapter reads it. */
export interface TagTimesAnswer {
  readonly revalidated_at_ms: Record<string, number>;
  readonly cache_ms: number;
  readonly skew_margin_ms: number;
  readonly kept_ms: number;
}

const FIELDS = new Set(['tags', 'tenant']);

/** Whether a request targets the tag-times read (`<endpoint>/tag-times`, any query aside). */
export function isTagTimesTarget(target: string): boolean {
  const path = target.split('?')[0] ?? '';
  return path.endsWith(`/${TAG_TIMES_SEGMENT}`);
}

/**
 * The body `{"tags": [...], "tenant"?: "..."}`, checked as a revalidation's tags and tenant are
 * (the same limits, the same normalised tags). @throws RevalidateRequestError (400 or 413)
 */
export function parseTagTimesBody(
  rawBody: string,
  policy: RevalidatePolicy,
): { tenant: string | undefined; tags: readonly string[] } {
  const fields = revalidateBodyFields(rawBody);
  const canonical = canonicalRevalidation(fields, policy);
  const extra = Object.keys(fields).find((field) => !FIELDS.has(field));
  if (extra !== undefined) {
    throw new RevalidateRequestError(400, extra, 'a tag-times read takes tags and tenant only');
  }
  return { tenant: canonical.tenant ?? undefined, tags: canonical.tags };
}

/** The answer to a checked read. @throws what the reader throws (the caller answers 503) */
export async function readTagTimes(
  deps: TagTimesDeps,
  request: { tenant: string | undefined; tags: readonly string[] },
): Promise<TagTimesAnswer> {
  const found = await deps.reader.revalidatedAt(request.tenant, request.tags);
  return {
    revalidated_at_ms: Object.fromEntries([...found].sort(([a], [b]) => (a < b ? -1 : 1))),
    cache_ms: deps.cacheMs,
    skew_margin_ms: deps.skewMarginMs,
    kept_ms: deps.keptMs,
  };
}
