/**
 * The ports only operators' work needs (rollback, the sweeper): a page's history, pending CDN
 * purges, the status index, the body listing and references, the sweep's cursor. The ports
 * every use case shares are in `core/page/ports.ts`.
 */
import type { CacheMeta, Lease, PageVersion } from '../page/model.js';
import type { VersionRows } from '../page/ports.js';
import type { RequestStatus } from '../page/rows.js';

/**
 * A page's history as operators use it (Recipe B): the VER# rows, and the writes only an
 * operator makes, under a lease seized from whoever held it.
 */
export interface PageHistory extends VersionRows {
  /** Every VER# row of the page, newest first, kept or not. */
  versions(pk: string): Promise<PageVersion[]>;
  version(pk: string, sk: string): Promise<PageVersion | undefined>;
  /**
   * Puts `meta` (a kept version made live, or the same page held) in one transaction with the
   * release of `lease`, only if META is still the generation the operator read, and the version
   * `meta.currentSk` names still exists.
   * @throws LeaseLostError, PageChangedError, VersionNotKeptError
   */
  restore(input: RestoreInput): Promise<void>;
  /**
   * Holds the page as it is: sets `hold_until` and `ttl` on META, and nothing else, in one
   * transaction with the release of `lease`, only while META is the generation the operator
   * read. A revalidation that marks META meanwhile keeps its mark.
   * @throws LeaseLostError, PageChangedError
   */
  hold(input: HoldWrite): Promise<void>;
  /** Lifts a hold. @returns whether the page was held */
  release(pk: string): Promise<boolean>;
}

export interface RestoreInput {
  readonly lease: Lease;
  readonly meta: CacheMeta;
  /** META as the operator read it: the write is refused if it changed since. */
  readonly expected: CacheMeta;
  readonly now: number;
}

export interface HoldWrite {
  readonly lease: Lease;
  /** Epoch seconds. */
  readonly holdUntil: number;
  /** META's TTL from now on: never before the hold ends. */
  readonly ttl: number;
  /** `generated_at` of META as the operator read it: the write is refused if it changed since. */
  readonly expectedGeneratedAt: number;
  readonly now: number;
}

/**
 * A CDN purge the CDN did not accept in time (throttled), kept until a retry gets it through.
 * `id` is the purge's identity at the CDN (CloudFront's CallerReference): every retry sends the
 * same one, so a purge accepted twice still makes one invalidation.
 */
export interface PendingPurge {
  readonly id: string;
  /** CDN tags, without CloudFront's `#` prefix. */
  readonly tags: readonly string[];
  /** Why it is pending (the last error). */
  readonly reason: string;
  /** When it was first recorded, epoch ms: pending purges are retried oldest first. */
  readonly recordedAt: number;
  /** Attempts made so far, the first submission's included. */
  readonly attempts: number;
}

/** Where pending purges wait for `retryPendingPurges` (core/operate/pending-purges.ts). */
export interface PendingPurges {
  /** Records a purge; recording the same purge (id and `recordedAt`) again keeps one. */
  add(purge: PendingPurge): Promise<void>;
  /** The oldest pending purges, at most `limit`; refused ones are not among them. */
  oldest(limit: number): Promise<PendingPurge[]>;
  /**
   * Sets aside a purge the CDN refused for good, with its reason, for an operator: it is never
   * resubmitted, so refused purges cannot keep newer ones from their turn.
   */
  refuse(purge: PendingPurge, input: { reason: string; at: number }): Promise<void>;
  /** One more failed attempt, and why; a purge removed meanwhile stays removed. */
  recordAttempt(purge: PendingPurge, input: { reason: string; at: number }): Promise<void>;
  /** Forgets a purge the CDN accepted. */
  remove(purge: PendingPurge): Promise<void>;
}

/** One submission of a pending purge: accepted, or still refused for a reason that may pass. */
export type PurgeAttempt =
  | { readonly status: 'submitted'; readonly invalidationId: string }
  | { readonly status: 'throttled'; readonly reason: string };

/** Submits a pending purge once more, under its own identity (a sweeper's retry). */
export interface PendingPurgeSubmitter {
  /** @throws CdnPurgeRejectedError when the CDN refuses it for good */
  resubmit(purge: PendingPurge): Promise<PurgeAttempt>;
}

/** One row of the sparse status index (`StatusIndex`, core/page/rows.ts), as operators read it. */
export interface StatusRow {
  readonly pk: string;
  readonly sk: string;
  /** `status_at`, epoch seconds: when it should have finished, failed, or its lease runs out. */
  readonly at: number;
  /** Who held the work: a REQ# row's `locked_by`, a LOCK row's `lease_owner`. */
  readonly owner?: string | undefined;
  /** A FAILED row's reason (`error_code`, `error`). */
  readonly errorCode?: string | undefined;
  readonly error?: string | undefined;
  /** The page, when the row names it (META's `cache_key`, the intent a REQ# row claimed). */
  readonly cacheKey?: string | undefined;
  /** A REQ# row's `created_at`, epoch seconds: when its claim was taken. */
  readonly createdAt?: number | undefined;
}

/**
 * Work a later publish made moot (issue 19): a FAILED or lost (STARTED) regeneration of a page
 * published since is marked resolved, with attributes FaceTheory readers ignore (never a new
 * `status`), and leaves the status index, so alarms and `isr failed`/`isr stuck` clear.
 */
export interface WorkResolution {
  /** META's `generated_at`; undefined when the row's partition has no META (not a page). */
  publishedAt(pk: string): Promise<number | undefined>;
  /**
   * Sets `resolved_at`/`resolved_by_generation` and takes the row out of the status index, only
   * while it is still the row that was read (same status and `status_at`). @returns whether written
   */
  resolve(row: StatusRow, input: ResolveInput): Promise<boolean>;
}

export interface ResolveInput {
  readonly status: RequestStatus;
  /** The publish that made the work moot (META's `generated_at`). */
  readonly generatedAt: number;
  readonly now: number;
}

/** The status index read one shard at a time, oldest `status_at` first, a bounded page each. */
export interface StatusIndexReader {
  /**
   * @returns at most `limit` rows, and whether the shard may hold more: a full page says it
   * may (DynamoDB stops at the limit without looking further), so a count is then a lower bound
   */
  readShard(
    shard: string,
    limit: number,
  ): Promise<{ readonly rows: readonly StatusRow[]; readonly truncated: boolean }>;
}

/** A body as a listing shows it. */
export interface ListedBody {
  readonly s3Key: string;
  /** When it was written, epoch seconds. */
  readonly writtenAt: number;
}

/** Bodies under the body prefix, a bounded page at a time, resumable from a cursor. */
export interface BodyListing {
  list(input: {
    readonly cursor: string | undefined;
    readonly limit: number;
  }): Promise<{ readonly bodies: readonly ListedBody[]; readonly next: string | undefined }>;
}

/** What points to bodies of one page, read strongly consistent: a body named here is in use. */
export interface PageReferences {
  /** META's `s3_key` and the `s3_key` of every VER# row META lists (`version_sks`). */
  readonly s3Keys: ReadonlySet<string>;
  /**
   * VER# rows META does not list (all of them when there is no META): garbage, since a publish
   * writes a row and the META listing it at once, unless a publish listed one after this read.
   */
  readonly unlisted: readonly {
    readonly sk: string;
    readonly s3Key: string | undefined;
    /** The tags the version carried: its page's index rows under them may be left over. */
    readonly tags?: readonly string[] | undefined;
  }[];
  /** The tags META carries; undefined when META is gone. */
  readonly tags?: readonly string[] | undefined;
  /** The page's LOCK, when there is one: a live lease may still publish the body of its token. */
  readonly lease: { readonly token: string | undefined; readonly expiresAt: number } | undefined;
}

export interface BodyReferences {
  of(pk: string): Promise<PageReferences>;
  /**
   * Deletes each of the page's VER# rows `sks` only while META does not list it, so a publish
   * that lists one meanwhile keeps it. @returns the sort keys deleted
   */
  forgetUnlisted(pk: string, sks: readonly string[]): Promise<string[]>;
}

/** Where the orphan sweep's listing position is kept between runs (a table row). */
export interface SweepCursor {
  load(): Promise<string | undefined>;
  /** `undefined` when the listing reached its end: the next run starts over. */
  save(cursor: string | undefined): Promise<void>;
}
