import { sha256Hex } from './cache-key.js';
import type { CacheMeta } from './ports.js';

/**
 * The FIFO deduplication ID of a regeneration intent: every stale hit on one generation within
 * one time window collapses into one message (and so one message ID, the worker's idempotency
 * key). The window is short, well under SQS's 5-minute dedupe memory, so a regeneration that
 * failed or was dropped is re-enqueued by the next stale hit after at most `windowSeconds`;
 * a new generation, etag or deployment always gets a new ID.
 */
export function regenerationDedupeId(
  meta: Pick<CacheMeta, 'pk' | 'generatedAt' | 'etag' | 'revalidatedAt'>,
  deployId: string,
  nowSeconds: number,
  windowSeconds: number,
): string {
  const bucket = Math.floor(nowSeconds / windowSeconds);
  // A revalidation of the same generation is a new intent: it must not be deduped away.
  const revalidated = meta.revalidatedAt ?? '';
  return sha256Hex(
    [meta.pk, meta.generatedAt, meta.etag ?? '', revalidated, deployId, bucket].join('|'),
  );
}

/**
 * The FIFO message group of a cache key's intents: the key itself (hashed, since a group ID is
 * at most 128 characters). SQS hands out one message of a group at a time, so a shared group
 * would make one failing page hold back every page that shares it for as long as its retries
 * last; with a group per key only that page waits. Concurrency stays bounded by the event
 * source's maximum concurrency, not by the number of groups.
 */
export const messageGroupOf = (pk: string): string => sha256Hex(pk);
