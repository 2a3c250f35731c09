/**
 * The ports every use case shares: the cache table's META and LOCK rows, the body store, the
 * tag index, the CDN, the regeneration queue and its DLQ, secrets, the in-progress rows. Each
 * adapter implements one in a file of its own; a port only one use case needs lives in that
 * use case's own `ports.ts`.
 */
import type { FailureRecord } from '../backoff.js';
import type { RegenerationIntent } from './intent.js';
import type { AcquiredLease, CacheMeta, Lease, PageRows, PassMark } from './model.js';

export interface AcquireLeaseInput {
  readonly pk: string;
  /** Caller's clock, epoch seconds. */
  readonly now: number;
  readonly durationSeconds: number;
  /** Free text for operators (function name, request id). */
  readonly owner?: string | undefined;
  /**
   * Take the lease even from a live holder (an operator's rollback or hold): the holder's token
   * is gone, so it can neither refresh nor publish. Never used by a regeneration.
   */
  readonly seize?: boolean | undefined;
}

/** Marks the REQ#<key> idempotency row COMPLETED in the same transaction as the publish. */
export interface IdempotencySeal {
  readonly idempotencyKey: string;
  /** GC horizon of the REQ# row, epoch seconds. */
  readonly ttl: number;
}

export interface PublishInput {
  readonly lease: Lease;
  /** With `currentSk`, its VER# row is written in the same transaction (never over another). */
  readonly meta: CacheMeta;
  /** Caller's clock, epoch seconds: the lease must still be live at this time. */
  readonly now: number;
  readonly seal?: IdempotencySeal | undefined;
  /**
   * META as the render read it under this lease before it started (undefined: there was none).
   * The publish is refused (`RevalidatedDuringRenderError`) when a revalidation marked or
   * expired META since: only a mark can change it while the lease is held.
   */
  readonly observed: CacheMeta | undefined;
}

export interface MarkPassInput {
  readonly lease: Lease;
  readonly mark: PassMark;
  /** Caller's clock, epoch seconds: the lease must still be live at this time. */
  readonly now: number;
}

/** META and LOCK rows of the cache table, and the one transaction that ties them together. */
export interface CacheTable {
  getMeta(pk: string, options?: { consistent?: boolean }): Promise<CacheMeta | undefined>;
  /**
   * META and META#PASS, strongly consistent, in one round trip (a Query on
   * `begins_with(sk, 'META')`): the origin's read of every request.
   */
  readPage(pk: string): Promise<PageRows>;
  /**
   * Puts META#PASS, deletes META (an uncacheable page never comes back as STALE) and LOCK, in
   * one transaction under the lease; no body is written.
   * @throws LeaseLostError, RevalidatedDuringRenderError, TransactionConflictError
   */
  markPass(input: MarkPassInput): Promise<void>;
  /** @throws LeaseHeldError when another contender holds a live lease. */
  acquireLease(input: AcquireLeaseInput): Promise<AcquiredLease>;
  /** Extends a lease this caller still owns. @throws LeaseLostError otherwise. */
  refreshLease(lease: Lease, input: { now: number; durationSeconds: number }): Promise<Lease>;
  /** Best-effort release; false when the lease was no longer this caller's. */
  releaseLease(lease: Lease): Promise<boolean>;
  /**
   * Puts META, deletes LOCK and (with a seal) completes REQ# in one transaction.
   * @throws LeaseLostError, NewerGenerationError, RequestAlreadyCompletedError,
   * RevalidatedDuringRenderError, TransactionConflictError
   */
  publishGeneration(input: PublishInput): Promise<void>;
  /**
   * Records one more failed regeneration on META, only while META still holds the generation
   * the caller saw and the failure count it read (else someone published or recorded first).
   * @returns whether the record was written
   */
  recordFailure(input: RecordFailureInput): Promise<boolean>;
  /**
   * Lifts a revalidation's mark from a LOCK the caller still holds, before it renders again.
   * @returns false when the lease is no longer the caller's
   */
  clearRevalidationMark(lease: Lease): Promise<boolean>;
}

export interface RecordFailureInput {
  readonly pk: string;
  readonly observedGeneratedAt: number;
  readonly previousCount: number;
  readonly record: FailureRecord;
  /** META's TTL from now on (an attempt keeps a requested page's rows); absent: unchanged. */
  readonly ttl?: number | undefined;
  /** The page is now broken: it joins the status index. */
  readonly broken?: boolean | undefined;
}

/**
 * What a body's object says of its page, for readers that do not have META's attributes:
 * FaceTheory keeps status, content type and CSP in S3 object metadata.
 */
export interface BodyMetadata {
  readonly status?: number | undefined;
  readonly contentType?: string | undefined;
  readonly contentSecurityPolicy?: string | undefined;
}

export interface PutBodyInput {
  readonly s3Key: string;
  readonly body: Uint8Array;
  readonly contentType: string;
  readonly metadata?: BodyMetadata | undefined;
}

export interface StoredBody {
  readonly body: Uint8Array;
  readonly etag: string;
  readonly contentType: string | undefined;
  readonly metadata: BodyMetadata;
}

/** Page bodies, one immutable object per generation. */
export interface BodyStore {
  /** Writes a new object; never replaces an existing one. Returns the key it stored under and its ETag. */
  putBody(input: PutBodyInput): Promise<{ readonly s3Key: string; readonly etag: string }>;
  /** @throws BodyNotFoundError when the object is gone. */
  getBody(s3Key: string): Promise<StoredBody>;
  /**
   * Retires a body neither META nor a kept version points to. The bucket is versioned: the
   * object becomes a noncurrent version, kept for the retention period after this moment (so
   * reads in flight finish and an operator can restore it), then expired by the lifecycle rule.
   * A body that is already gone is not an error.
   */
  deleteBody(s3Key: string): Promise<void>;
}

/** A queue message the worker gives up on, and why. */
export interface DeadLetter {
  readonly messageId: string;
  readonly body: string;
  readonly groupId: string | undefined;
  readonly receiveCount: number;
  readonly reason: { readonly code: string; readonly message: string };
}

/** Where poison and exhausted messages go, with their reason attached. */
export interface DeadLetterQueue {
  send(letter: DeadLetter): Promise<void>;
}

/** VER# rows as a publisher uses them: the ones a publish dropped from META's list go. */
export interface VersionRows {
  /** Deletes VER# rows. @returns the body keys they pointed to */
  forget(pk: string, sks: readonly string[]): Promise<string[]>;
}

/** Where stale hits queue their regeneration intent. */
export interface RegenerationQueue {
  /** Messages with one `deduplicationId` collapse into one (SQS FIFO, 5-minute window). */
  enqueue(
    intent: RegenerationIntent,
    options: { readonly deduplicationId: string; readonly groupId: string },
  ): Promise<void>;
}

/** A secret's current value (the upstream's shared header, a webhook signing key). */
export interface SecretSource {
  /** @throws when the value cannot be had now; callers treat that as retryable. */
  value(): Promise<string>;
}

/**
 * How every remover takes a page out of the tag index: a publish for the tags its page lost, a
 * rollback, a revalidation for the pages it found gone (or no longer carrying the tag) and the
 * sweeper for pages whose META is gone.
 */
export interface TagRowRemoval {
  /**
   * Removes the page's rows under `tags`, each only while the page's META does not carry the
   * tag and nobody holds the page's lease (a render indexes what it gains before its publish,
   * under its lease), in one transaction: a row a publish (re)added is never removed, however
   * late the removal. @returns the tags whose rows went (a kept one is left for a later remover)
   */
  remove(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<string[]>;
}

/** How many pages a tag indexes: counted, or past a limit estimated. */
export interface TagPageCount {
  readonly count: number;
  /** False past the limit: `count` is then an estimate, at least the limit. */
  readonly exact: boolean;
}

/** Counts a tag's pages in one small Query, so a count costs one call whatever the tag's size. */
export interface TagPageCounter {
  /**
   * Pages `tag` indexes (a page's variants: `variantTagOf`): exact up to `limit`, estimated
   * (and at least `limit`) past it.
   */
  countPages(tenant: string | undefined, tag: string, limit: number): Promise<TagPageCount>;
}

/**
 * Which pages carry a tag, per tenant (`pk = TAG#<tenant>#<tag>`, `sk = PAGE#<page pk>`), as
 * publishers keep it: a page is added under a tag before the publish that first gives it the
 * tag, so a revalidation that finds no row for a page cannot miss a published one; rows of tags a
 * page lost are removed after its publish (`TagRowRemoval`).
 */
export interface TagIndex extends TagRowRemoval, TagPageCounter {
  add(tenant: string | undefined, pk: string, tags: readonly string[]): Promise<void>;
  /** When each of `tags` was last revalidated (epoch ms); tags never revalidated are absent. */
  revalidatedAt(tenant: string | undefined, tags: readonly string[]): Promise<Map<string, number>>;
}

/** What became of a CDN purge: the invalidations made, or why there were none. */
export type CdnPurge =
  | { readonly status: 'submitted'; readonly invalidationIds: readonly string[] }
  | { readonly status: 'not-configured' }
  /** Not accepted in time (throttled): recorded and retried until it is, never dropped. */
  | { readonly status: 'pending'; readonly reason: string };

/** Purges cached pages from the CDN by cache tag (`cdnTagOf`, `cdnKeyTagOf`). */
export interface CdnInvalidator {
  /**
   * `effectId` (a revalidation's) makes the purge's identity deterministic, so a retry of the
   * same effect reuses the invalidation it already made instead of creating a second one.
   */
  invalidateTags(tags: readonly string[], options?: CdnPurgeOptions): Promise<CdnPurge>;
}

export interface CdnPurgeOptions {
  readonly effectId?: string | undefined;
}

/** A tag revalidation still being marked, as the origin honours it (see `in-progress.ts`). */
export interface InProgressEntry {
  readonly atMs: number;
  readonly effectId: string;
}

/**
 * The in-progress rows, `REVALIDATING#<tenant or _>#<shard>` / `STATE`: one entry per
 * `<mode>#<tag>`, written to every shard before the 202, read by the origin on one shard.
 */
export interface RevalidationsInProgress {
  /**
   * Makes `entry.effectId` the owner of the entry on all `shards` at once, at the later of its
   * time and the entry's: the revalidation that writes last owns it (whatever the clocks say),
   * and its time never goes back.
   */
  begin(
    tenant: string | undefined,
    shards: number,
    entry: InProgressEntry & { readonly key: string },
  ): Promise<void>;
  /** Removes the entry from all `shards` at once while it is `effectId`'s. @returns whether it went */
  end(tenant: string | undefined, shards: number, key: string, effectId: string): Promise<boolean>;
  /** The shard's entries, strongly consistent, by `<mode>#<tag>`. */
  read(tenant: string | undefined, shard: number): Promise<ReadonlyMap<string, InProgressEntry>>;
}
