import type { CacheKey } from './model.js';

/** The FaceTheory partition key of a cache entry: `TENANT#<tenant>#CACHE#<hash>` or `CACHE#<hash>`. */
export const partitionKey = (tenant: string | undefined, hash: string): string =>
  tenant === undefined ? `CACHE#${hash}` : `TENANT#${tenant}#CACHE#${hash}`;

/** Sort keys of the rows that share one cache entry's partition. */
export const SortKey = {
  Meta: 'META',
  Lock: 'LOCK',
  /**
   * The hit-for-pass mark (`PassMark`). It sorts right after META, so one Query on
   * `begins_with(sk, 'META')` reads both; a FaceTheory reader's GetItem of `META` never sees it.
   */
  Pass: 'META#PASS',
} as const;

/**
 * Version rows (seed 001, Recipe B): `VER#<generated_at, 10 digits>-<lease token>`. Sorted by
 * generation; the lease token is unique per render and names the body (`bodyKeyOf`), so a body
 * tells which version it belongs to. The id shown to operators is the part after `VER#`.
 */
export const VERSION_PREFIX = 'VER#';
export const versionSortKey = (generatedAt: number, leaseToken: string): string =>
  `${VERSION_PREFIX}${String(generatedAt).padStart(10, '0')}-${leaseToken}`;
export const versionIdOf = (sk: string): string => sk.slice(VERSION_PREFIX.length);

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
 * The page and the lease token a body key names (`bodyKeyOf` read backwards), or undefined when
 * the key is not `<prefix><tenant or _>/<hash>/<token>`: such an object is never ours to delete.
 */
export function bodyOwnerOf(
  s3Key: string,
  prefix: string,
):
  { readonly pk: string; readonly tenant: string | undefined; readonly token: string } | undefined {
  if (!s3Key.startsWith(prefix)) return undefined;
  const parts = s3Key.slice(prefix.length).split('/');
  if (parts.length !== 3) return undefined;
  const [tenant = '', hash = '', token = ''] = parts;
  if (hash === '' || token === '') return undefined;
  if (tenant !== '_' && !TENANT_PATTERN.test(tenant)) return undefined;
  const owner = tenant === '_' ? undefined : tenant;
  return { pk: partitionKey(owner, hash), tenant: owner, token };
}

/**
 * Tag an earlier release set on superseded bodies for the lifecycle rule. Nothing sets it now (a
 * retired body is deleted, which in the versioned bucket keeps it as a noncurrent version for
 * the retention period); the bucket still expires bodies that carry it.
 */
export const SupersededTag = { Key: 'isr-state', Value: 'superseded' } as const;

/**
 * Tenants are short identifiers; `#` is excluded so the pk (`TENANT#<tenant>#CACHE#<hash>`)
 * stays unambiguous. The tenant allow-list (`ISR_TENANTS`) is validated with the same pattern.
 */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The sparse status index (seed 004): only rows that need an operator's eye carry
 * `status_shard` (its partition key) and `status_at` (its sort key, epoch seconds):
 * - REQ# STARTED (`status_at` = when it should have finished) and FAILED (= when it failed);
 * - LOCK (= when the lease runs out; a publish or a release deletes the row);
 * - META of a broken page (= its last failure; a publish replaces the row).
 * A COMPLETED REQ# row leaves the index. Rows are spread over `STATUS_SHARDS` partitions per
 * status, for the 10 GB-per-partition note in the article: a reader queries every shard.
 */
export const StatusIndex = {
  Name: 'status-index',
  PartitionKey: 'status_shard',
  SortKey: 'status_at',
} as const;

export const IndexedStatus = {
  Started: 'STARTED',
  Failed: 'FAILED',
  Lease: 'LEASE',
  Broken: 'BROKEN',
} as const;
export type IndexedStatus = (typeof IndexedStatus)[keyof typeof IndexedStatus];

export const STATUS_SHARDS = 4;

/** The index partition of a row of `pk` in `status`: the same shard for every row of a key. */
export function statusShardOf(status: IndexedStatus, pk: string): string {
  let hash = 0;
  for (let i = 0; i < pk.length; i++) hash = (hash * 31 + pk.charCodeAt(i)) >>> 0;
  return `${status}#${hash % STATUS_SHARDS}`;
}

/** Every partition of `status`, for a reader. */
export const statusShards = (status: IndexedStatus): string[] =>
  Array.from({ length: STATUS_SHARDS }, (_, shard) => `${status}#${shard}`);

/** The partition of CDN purges CloudFront has not accepted yet (see `adapters/pending-purges/dynamodb.ts`). */
export const PENDING_PURGES_PK = 'CDN#PENDING';

/**
 * The sweeper's orphan-body listing cursor. Its partition key is the only one the sweeper's role
 * may put a row in (`dynamodb:LeadingKeys` in lib/isr-permissions.ts).
 */
export const SweepCursorKey = { pk: 'SWEEP#orphan-bodies', sk: 'CURSOR' } as const;
