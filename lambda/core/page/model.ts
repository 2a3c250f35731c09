/**
 * The page model every use case shares: a cache entry's identity, its published generation
 * (META), its versions, its lease, its hit-for-pass mark, a rendered page and how a
 * revalidation leaves it. Types (and one closed set), so the rules and the ports that speak of
 * pages import it without importing each other.
 */
import type { FailureRecord } from '../backoff.js';
import type { LeaseHolder } from '../errors.js';
import type { Generation } from './freshness.js';

/** One cache entry's identity: what the renderer is asked for and where its rows live. */
export interface CacheKey {
  readonly tenant: string | undefined;
  /** Canonical, percent-encoded path: `/blog/caf%C3%A9`. */
  readonly path: string;
  /** Canonical query: allow-listed params sorted by name then value, encoded; '' when none. */
  readonly query: string;
  /** `path` plus `?query` when there is one, plus `#variant` for a variant: what is hashed. */
  readonly key: string;
  /** sha256 hex of `key`. */
  readonly hash: string;
  /** The canonical variant (`rsc=1&…`), '' or absent for the page itself. */
  readonly variant?: string | undefined;
  /** sha256 hex of the page's key without its variant (its variants' tag and CDN key tag). */
  readonly pageHash?: string | undefined;
  /** `TENANT#<tenant>#CACHE#<hash>` or `CACHE#<hash>`. */
  readonly pk: string;
}

/** The published generation of one cache entry: the FaceTheory META row. */
export interface CacheMeta extends Generation {
  readonly pk: string;
  /** Object key of the body in the bucket; immutable, never overwritten. */
  readonly s3Key: string;
  readonly etag?: string | undefined;
  /** GC horizon only; freshness never depends on it. */
  readonly ttl?: number | undefined;
  /** The normalised cache key, for operators reading the table. */
  readonly cacheKey?: string | undefined;
  readonly contentType?: string | undefined;
  /** HTTP status the page is served with (200, 404, 301...). */
  readonly statusCode?: number | undefined;
  /** Redirect target of a 3xx page. */
  readonly location?: string | undefined;
  /** Tags the renderer gave the page (for operators and tag-based revalidation). */
  readonly tags?: readonly string[] | undefined;
  /** Regenerations of this generation that failed in a row; a publish clears it. */
  readonly failures?: FailureRecord | undefined;
  /** Upstream response headers kept with the generation (the allow-list), lower-case names. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Size of the body in bytes, so HEAD can say it without reading the body. */
  readonly contentLength?: number | undefined;
  /** When a revalidation last marked this generation stale (epoch seconds). */
  readonly revalidatedAt?: number | undefined;
  /**
   * The effect id of the revalidation that last marked this generation (`revalidated_by`): a
   * publish is conditioned on it being what its render read, so a mark in between refuses it.
   */
  readonly revalidatedBy?: string | undefined;
  /** Recipe B pointer: the VER# row this generation is (`current_sk`). */
  readonly currentSk?: string | undefined;
  /** The kept versions' sort keys, newest publish first (`version_sks`), `currentSk` among them. */
  readonly versionSks?: readonly string[] | undefined;
  /** Until when (epoch seconds) the page is held: served as is, never regenerated. */
  readonly holdUntil?: number | undefined;
  /** Set by a rollback, for operators: which version was live before, when, and who. */
  readonly rolledBack?: RollbackRecord | undefined;
}

export interface RollbackRecord {
  readonly fromSk: string | undefined;
  readonly at: number;
  readonly by: string;
}

/**
 * One kept version of a page (a `VER#` row, Recipe B): the generation attributes META had when
 * it was published. A publish deletes the rows it drops from META's list; the sweeper deletes
 * any META no longer lists (after an `expire`, or META's TTL). Only a gone page's (404/410) row
 * carries a TTL, its META's (see `versionToItem`): others live as long as META lists them.
 */
export interface PageVersion extends CacheMeta {
  readonly sk: string;
}

/** A lease this caller holds: the token is what keeps stale writers out. */
export interface Lease {
  readonly pk: string;
  readonly token: string;
  /** Epoch seconds; the lease is held iff this is later than now. */
  readonly expiresAt: number;
  readonly owner?: string | undefined;
}

/**
 * A lease just taken. `takenOver` is the expired lease it replaced: its holder never published
 * (a publish deletes LOCK), and with its token gone it never can.
 */
export interface AcquiredLease extends Lease {
  readonly takenOver?: LeaseHolder | undefined;
}

/**
 * A key remembered as pass (hit-for-pass, Varnish's name): its last render was not to be
 * stored, so until `until` its requests go to the upstream as they are, with no lease, render
 * slot, body or write. The `META#PASS` row, beside META: a FaceTheory reader (GetItem of
 * `META`) never sees it. A META published later wins over it (META was deleted when it was
 * written, so any META beside it is newer).
 */
export interface PassMark {
  readonly pk: string;
  /** Epoch seconds: the mark is live while `now < until`. */
  readonly until: number;
  /** Why the answer was not stored (`RefusalReason`). */
  readonly reason: string;
  /** When the mark was written, epoch seconds. */
  readonly markedAt: number;
  /** The normalised cache key, for operators. */
  readonly cacheKey?: string | undefined;
  /** GC horizon only: `until` decides. */
  readonly ttl?: number | undefined;
}

/** What the origin reads of a page on every request, in one round trip. */
export interface PageRows {
  readonly meta: CacheMeta | undefined;
  readonly pass: PassMark | undefined;
}

/** A rendered page. `admitPage` (render-policy.ts) decides what happens to it. */
export interface RenderResult {
  readonly status: number;
  readonly contentType: string;
  readonly body: Uint8Array;
  /**
   * Response headers, lower-case names, `set-cookie` aside (`cache-control` decides whether the
   * page may be stored at all, and its freshness when `revalidateSeconds` is unset; the kept
   * allow-list is replayed to viewers).
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** `Set-Cookie` values: per viewer, never cached (stripped or refused by the policy). */
  readonly setCookies?: readonly string[] | undefined;
  /** Redirect target, for 3xx pages. */
  readonly location?: string | undefined;
  /** Freshness this page asks for; the configured default otherwise. */
  readonly revalidateSeconds?: number | undefined;
  readonly tags?: readonly string[] | undefined;
}

/** How a revalidation leaves a page: marked stale (served STALE, regenerated), or expired. */
export const RevalidationMode = { Stale: 'stale', Expire: 'expire' } as const;
export type RevalidationMode = (typeof RevalidationMode)[keyof typeof RevalidationMode];
