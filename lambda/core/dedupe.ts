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
  meta: Pick<CacheMeta, 'pk' | 'generatedAt' | 'etag'>,
  deployId: string,
  nowSeconds: number,
  windowSeconds: number,
): string {
  const bucket = Math.floor(nowSeconds / windowSeconds);
  return sha256Hex([meta.pk, meta.generatedAt, meta.etag ?? '', deployId, bucket].join('|'));
}

/** Spreads keys over a bounded number of FIFO message groups; one key always maps to one group. */
export function messageGroupFor(cacheKeyHash: string, groups: number): string {
  return `g${Number.parseInt(cacheKeyHash.slice(0, 8), 16) % groups}`;
}
