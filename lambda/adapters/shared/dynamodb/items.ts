/**
 * Rows of the cache table, with the exact FaceTheory attribute names and types (`s3_key` S,
 * `generated_at` N, `lease_expires_at` N...), so Go and Python TableTheory services read and
 * write the same rows.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { LeaseHolder } from '../../../core/errors.js';
import type { CacheMeta, Lease, PageVersion } from '../../../core/page/model.js';
import { IndexedStatus, SortKey, statusShardOf } from '../../../core/page/rows.js';

export type Item = Record<string, AttributeValue>;

/**
 * How long a bookkeeping row (a revalidation's status, an unflushed purge) is kept before TTL
 * may collect it when its caller names no other lifetime: as long as a revalidation's REQ#.
 */
export const DEFAULT_ROW_TTL_SECONDS = 7 * 24 * 3600;

const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number): AttributeValue => ({ N: String(value) });

/** Optional attributes are left out rather than written as NULL. */
const optional = <T>(name: string, value: T | undefined, encode: (v: T) => AttributeValue): Item =>
  value === undefined ? {} : { [name]: encode(value) };

export const keyOf = (pk: string, sk: string): Item => ({ pk: S(pk), sk: S(sk) });

/**
 * META as one item: a generation's attributes (Recipe A, which FaceTheory and TableTheory
 * readers use unchanged) plus the Recipe B pointer, the kept versions, a hold and the last
 * rollback: extra attributes those readers ignore.
 */
export const metaToItem = (meta: CacheMeta): Item => ({
  ...keyOf(meta.pk, SortKey.Meta),
  ...generationAttributes(meta),
  ...optional('ttl', meta.ttl, N),
  ...optional('current_sk', meta.currentSk, S),
  // A list, not a set: the order (newest publish first) decides which version is dropped next.
  ...optional('version_sks', meta.versionSks?.length ? meta.versionSks : undefined, (sks) => ({
    L: sks.map(S),
  })),
  ...optional('hold_until', meta.holdUntil, N),
  ...optional('rolled_back_from', meta.rolledBack?.fromSk, S),
  ...optional('rolled_back_at', meta.rolledBack?.at, N),
  ...optional('rolled_back_by', meta.rolledBack?.by, S),
});

/**
 * A VER# row: the generation's attributes as META had them when it was published. No TTL: a
 * kept version lives as long as META lists it; the sweeper deletes the rows META no longer lists
 * (see `PageVersion`).
 * A gone page (404/410) is the exception: its row expires with its META (`ttl`, an hour after
 * it goes stale by default), so random paths do not leave rows behind; rolling back to a 404
 * is never wanted, rolling back from one goes to an earlier version, which has no TTL.
 */
export const versionToItem = (meta: CacheMeta & { readonly currentSk: string }): Item => ({
  ...keyOf(meta.pk, meta.currentSk),
  ...generationAttributes(meta),
  ...optional('ttl', isGone(meta.statusCode) ? meta.ttl : undefined, N),
});

const isGone = (status: number | undefined): boolean => status === 404 || status === 410;

export const itemToVersion = (item: Item): PageVersion => ({
  ...itemToMeta(item),
  sk: str(item, 'sk') ?? '',
});

const generationAttributes = (meta: CacheMeta): Item => ({
  s3_key: S(meta.s3Key),
  generated_at: N(meta.generatedAt),
  revalidate_seconds: N(meta.revalidateSeconds),
  ...optional('etag', meta.etag, S),
  ...optional('cache_key', meta.cacheKey, S),
  ...optional('content_type', meta.contentType, S),
  ...optional('status_code', meta.statusCode, N),
  ...optional('location', meta.location, S),
  // A string set cannot be empty: no tags means no attribute.
  ...optional('tags', meta.tags?.length ? meta.tags : undefined, (tags) => ({
    SS: [...new Set(tags)],
  })),
  ...optional('response_headers', meta.headers, (headers) => ({
    M: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, S(value)])),
  })),
  ...optional('content_length', meta.contentLength, N),
});

export const itemToMeta = (item: Item): CacheMeta => ({
  pk: str(item, 'pk') ?? '',
  s3Key: str(item, 's3_key') ?? '',
  generatedAt: num(item, 'generated_at') ?? 0,
  revalidateSeconds: num(item, 'revalidate_seconds') ?? 0,
  etag: str(item, 'etag'),
  ttl: num(item, 'ttl'),
  cacheKey: str(item, 'cache_key'),
  contentType: str(item, 'content_type'),
  statusCode: num(item, 'status_code'),
  location: str(item, 'location'),
  tags: item.tags?.SS,
  failures: failuresOf(item),
  headers: headersOf(item),
  contentLength: num(item, 'content_length'),
  revalidatedAt: num(item, 'revalidated_at'),
  revalidatedBy: str(item, 'revalidated_by'),
  currentSk: str(item, 'current_sk'),
  versionSks: item.version_sks?.L?.flatMap((value) => (value.S === undefined ? [] : [value.S])),
  holdUntil: num(item, 'hold_until'),
  rolledBack: rollbackOf(item),
});

function rollbackOf(item: Item): CacheMeta['rolledBack'] {
  const at = num(item, 'rolled_back_at');
  if (at === undefined) return undefined;
  return { fromSk: str(item, 'rolled_back_from'), at, by: str(item, 'rolled_back_by') ?? '' };
}

/** The kept upstream headers (`response_headers`, a map of strings). */
function headersOf(item: Item): CacheMeta['headers'] {
  const map = item.response_headers?.M;
  if (map === undefined) return undefined;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(map))
    if (value.S !== undefined) headers[name] = value.S;
  return headers;
}

/** The failure record of a META row: extra attributes beside the FaceTheory ones. */
function failuresOf(item: Item): CacheMeta['failures'] {
  const count = num(item, 'regen_failures');
  if (count === undefined) return undefined;
  return {
    count,
    lastFailedAt: num(item, 'regen_failed_at') ?? 0,
    nextAttemptAt: num(item, 'regen_next_at') ?? 0,
    error: str(item, 'regen_error') ?? '',
  };
}

export const leaseToItem = (lease: Lease, ttl: number): Item => ({
  ...keyOf(lease.pk, SortKey.Lock),
  lease_token: S(lease.token),
  lease_expires_at: N(lease.expiresAt),
  ttl: N(ttl),
  ...optional('lease_owner', lease.owner, S),
  // In the status index until a publish or a release deletes it: one past `status_at` was abandoned.
  status_shard: S(statusShardOf(IndexedStatus.Lease, lease.pk)),
  status_at: N(lease.expiresAt),
});

export const itemToHolder = (item: Item | undefined): LeaseHolder | undefined =>
  item === undefined
    ? undefined
    : {
        token: str(item, 'lease_token'),
        expiresAt: num(item, 'lease_expires_at') ?? 0,
        owner: str(item, 'lease_owner'),
      };

export const str = (item: Item, name: string): string | undefined => item[name]?.S;

export const num = (item: Item, name: string): number | undefined => {
  const value = item[name]?.N;
  return value === undefined ? undefined : Number(value);
};
