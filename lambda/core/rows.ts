import { randomUUID } from 'node:crypto';
import type { CacheKey } from './cache-key.js';

/** Sort keys of the rows that share one cache entry's partition. */
export const SortKey = {
  Meta: 'META',
  Lock: 'LOCK',
} as const;

/** Sort key of the idempotency row for one regeneration intent. */
export const requestSortKey = (idempotencyKey: string): string => `REQ#${idempotencyKey}`;

/** Status of a REQ# row, exactly as FaceTheory stores it. */
export const RequestStatus = {
  Started: 'STARTED',
  Completed: 'COMPLETED',
  Failed: 'FAILED',
} as const;
export type RequestStatus = (typeof RequestStatus)[keyof typeof RequestStatus];

/** Every body key starts with this prefix; the bucket's grants and lifecycle rule rely on it. */
export const BODY_KEY_PREFIX = 'pages/';

/**
 * A new, never-used object key for one render's body. Bodies are immutable: a paused stale
 * writer that overwrote a shared key could replace the live body after a newer publish, so every
 * render gets its own key and only META decides which one is live.
 */
export const newBodyKey = (cacheKey: CacheKey, generatedAt: number): string =>
  `${BODY_KEY_PREFIX}${cacheKey.tenant ?? '_'}/${cacheKey.hash}/${generatedAt}-${randomUUID()}`;
