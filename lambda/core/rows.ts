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
 * The object key of the one body rendered under a lease. Bodies are immutable: a paused stale
 * writer that overwrote a shared key could replace the live body after a newer publish, so every
 * render gets its own key (one render per lease, and lease tokens are random UUIDs) and only META
 * decides which one is live. Naming the body after its lease lets whoever takes over an expired
 * lease find the body its crashed holder may have left, and retire it.
 */
export const bodyKeyOf = (
  cacheKey: CacheKey,
  leaseToken: string,
  prefix: string = BODY_KEY_PREFIX,
): string => `${prefix}${cacheKey.tenant ?? '_'}/${cacheKey.hash}/${leaseToken}`;

/**
 * Tag the bucket's lifecycle rule expires on: set on a body only once META points elsewhere (or
 * on an orphan no META ever referenced). The S3 adapter sets it; the CDK lifecycle rule reads it.
 */
export const SupersededTag = { Key: 'isr-state', Value: 'superseded' } as const;

/**
 * Tenants are short identifiers; `#` is excluded so the pk (`TENANT#<tenant>#CACHE#<hash>`)
 * stays unambiguous. The tenant allow-list (`ISR_TENANTS`) is validated with the same pattern.
 */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
