/**
 * The ports the ISR core needs, in one place. Each adapter (DynamoDB, S3, SQS, HTTP renderer)
 * implements one of these in a file of its own; use cases only ever see these types.
 */
import type { FailureRecord } from './backoff.js';
import type { CacheKey } from './cache-key.js';
import type { LeaseHolder } from './errors.js';
import type { Generation } from './freshness.js';
import type { QueuedIntent, RegenerationIntent } from './intent.js';
import type { QueuedPurge } from './revalidate/purge-message.js';
import type { RequestStatus } from './rows.js';

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

/** What the renderer is asked for: only the cache key, so nothing outside it can change a page. */
export interface RenderRequest {
  readonly cacheKey: CacheKey;
  /** Aborted when the render must stop (timeout, lease lost). */
  readonly signal: AbortSignal;
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

/**
 * Produces a page. Implementations return any HTTP status they get, throw `RenderRetryableError`
 * for failures that may pass (network errors), and may throw `RenderRefusedError` early (a body
 * too large to read). Timeouts, lease loss and the cache policy are applied around every renderer.
 */
export interface Renderer {
  render(request: RenderRequest): Promise<RenderResult>;
}

/** A queue message the worker gives up on, and why. */
export interface DeadLetter {
  readonly messageId: string;
  readonly body: string;
  readonly groupId: string | undefined;
  readonly receiveCount: number;
  readonly reason: { readonly code: string; readonly message: string };
}

/**
 * A viewer's request as the upstream gets it on a pass-through: method, path and query as
 * received, headers already filtered (`core/forwarding.ts`), the body as bytes.
 */
export interface PassRequest {
  readonly method: string;
  /** The path as received (percent-encoded), without the query. */
  readonly path: string;
  /** The raw query string, without `?`; `''` when none. */
  readonly query: string;
  /** Lower-case names; a repeated header as several entries. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array | AsyncIterable<Uint8Array> | undefined;
  /** Aborted when the caller gives up (the pass timeout, the viewer gone). */
  readonly signal?: AbortSignal | undefined;
}

/** The upstream's answer, untouched: status, headers (Set-Cookie repeated), body bytes. */
export interface PassAnswer {
  readonly status: number;
  /** Lower-case names, in the upstream's order; a repeated header as several entries. */
  readonly headers: readonly (readonly [string, string])[];
  /** The body as it came, never decompressed or re-encoded. */
  readonly body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/**
 * The upstream reached with the viewer's own request (pass-through). Implementations never
 * decode Content-Encoding and stream both ways.
 * @throws PassThroughError when the upstream cannot be reached
 */
export interface PassThrough {
  forward(request: PassRequest): Promise<PassAnswer>;
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

/** Counts renders per cache entry (the demo renderer shows it on the page). */
export interface RenderCounter {
  increment(cacheKey: CacheKey): Promise<number>;
}

/** Where stale hits queue their regeneration intent. */
export interface RegenerationQueue {
  /** Messages with one `deduplicationId` collapse into one (SQS FIFO, 5-minute window). */
  enqueue(
    intent: RegenerationIntent,
    options: { readonly deduplicationId: string; readonly groupId: string },
  ): Promise<void>;
}

/** The queue as a revalidation's fan-out uses it: many intents, few calls. */
export interface BatchRegenerationQueue extends RegenerationQueue {
  /**
   * Queues the intents in as few calls as the queue allows (SQS: 10 a call), so a fan-out costs
   * one call per ten pages. @throws when an intent could not be queued
   */
  enqueueBatch(intents: readonly QueuedIntent[]): Promise<void>;
}

/**
 * Where CDN purges wait for the purger (a standard SQS queue, `core/revalidate/soft-purge.ts`): a
 * page's soft purge at once, a revalidation's deadline purge delayed (at most 900 s).
 */
export interface PurgeQueue {
  /** Sends every purge, in as few calls as the queue allows. @throws when one was not sent */
  send(purges: readonly QueuedPurge[]): Promise<void>;
}

/** A secret's current value (the upstream's shared header, a webhook signing key). */
export interface SecretSource {
  /** @throws when the value cannot be had now; callers treat that as retryable. */
  value(): Promise<string>;
}

/**
 * The writes of a revalidation on a page's rows. A render in flight publishes only while META
 * carries the mark it read under its lease, so marking (or expiring) META refuses it; a first
 * render read no META, so for a page without META its LOCK is marked instead (the publish's
 * LOCK condition), and it renders again rather than publish a page older than the revalidation.
 */
export interface RevalidationMarks {
  /** Marks the page's LOCK, if there is one (a page without META). @returns whether there was one */
  markLock(pk: string, effectId: string): Promise<boolean>;
  /**
   * Makes META stale for everyone (`revalidate_seconds = 0`, so Recipe A readers agree), marks it
   * with the effect (`revalidated_by`) and clears its failure record. @returns META as it was,
   * undefined when there was none
   */
  markStale(pk: string, input: { effectId: string; now: number }): Promise<CacheMeta | undefined>;
  /** Deletes META: the page is never served again as it was. @returns META as it was */
  expire(pk: string): Promise<CacheMeta | undefined>;
  /**
   * Deletes the page's hit-for-pass mark (`META#PASS`), so its next request renders for the
   * cache again instead of passing until the mark runs out. @returns whether there was one
   */
  clearPass(pk: string): Promise<boolean>;
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

/**
 * The tag index as a revalidation uses it: which pages carry a tag, when it was revalidated,
 * and the rows of pages it finds gone (or no longer carrying the tag) removed.
 */
export interface TagRevalidations extends TagRowRemoval, TagPageCounter {
  /** One page of the page pks indexed under `tag`, and where the next page starts. */
  pages(
    tenant: string | undefined,
    tag: string,
    cursor?: string,
    limit?: number,
  ): Promise<{ readonly pks: readonly string[]; readonly next: string | undefined }>;
  /** Records the revalidation (`sk = STATE`), read back by `TagIndex.revalidatedAt`. */
  recordRevalidation(
    tenant: string | undefined,
    tag: string,
    input: { effectId: string; atMs: number },
  ): Promise<void>;
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

/** One row of the sparse status index (`StatusIndex` in core/rows.ts), as operators read it. */
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

/** A revalidation as its status reports it, found by effect id (`GET .../<effect_id>`). */
export interface RevalidationStatus {
  readonly effectId: string;
  readonly tenant: string | undefined;
  readonly mode: 'stale' | 'expire';
  readonly regenerate: boolean;
  /** `marking` while pages are still being marked, `done` once every page is. */
  readonly state: 'marking' | 'done';
  /** Pages found so far, and of them marked, held (listed: the first few) and queued. */
  readonly pages: number;
  readonly marked: number;
  readonly regenerations: number;
  readonly held: number;
  readonly heldPages: readonly { readonly key: string; readonly holdUntil: number }[];
  /** Epoch ms the revalidation was accepted, and finished marking. */
  readonly acceptedAtMs: number;
  readonly doneAtMs?: number | undefined;
  /** Tag fan-outs still marking in the background (`FanOutProgressRows.finish` counts them down). */
  readonly fanOuts?: number | undefined;
  /** The pages the tags' index held when accepted (`exact: false`: at least), if any tag. */
  readonly expected?: TagPageCount | undefined;
  /** Set when the CDN purge waits for the pages' new generations, with this deadline. */
  readonly purgeDeadlineSeconds?: number | undefined;
}

/** Revalidation statuses by effect id: one small row each, kept as long as the key's REQ# row. */
export interface RevalidationStatuses {
  /** Writes the status (a newer write of one effect replaces the older). */
  put(status: RevalidationStatus): Promise<void>;
  /** The status, read strongly consistent; undefined for an unknown effect id. */
  get(effectId: string): Promise<RevalidationStatus | undefined>;
  /** Records the pages the tags' index held at the 202, for progress against it. */
  expect(effectId: string, expected: TagPageCount): Promise<void>;
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

/** Where one tag's fan-out stands (`pk = FANOUT`): what the sweeper resumes from. */
export interface FanOutProgress {
  readonly tenant: string | undefined;
  readonly effectId: string;
  readonly mode: 'stale' | 'expire';
  readonly tag: string;
  readonly regenerate: boolean;
  /** Where the next batch starts in the tag index; '' for its start. */
  readonly cursor: string;
  readonly updatedAtMs: number;
  readonly marked: number;
}

/** What one fan-out batch did, added to its effect's status. */
export interface StepCounts {
  readonly marked: number;
  readonly regenerations: number;
}

/**
 * The fan-out progress rows; every write after the first is conditioned on the cursor read,
 * and carries the batch's counts to the effect's status in the same transaction: of two copies
 * of a step, exactly one moves the cursor and counts, and a crash leaves neither half.
 */
export interface FanOutProgressRows {
  start(progress: FanOutProgress): Promise<void>;
  get(
    progress: Pick<FanOutProgress, 'tenant' | 'effectId' | 'mode' | 'tag'>,
  ): Promise<FanOutProgress | undefined>;
  /**
   * Moves the cursor on from `from` and adds `counts` to the status.
   * @returns false when it was not at `from` (a duplicate)
   * @throws TransactionConflictError when a concurrent write to the status cancelled it
   */
  advance(
    progress: FanOutProgress,
    input: { from: string; to: string; counts: StepCounts; atMs: number },
  ): Promise<boolean>;
  /**
   * Deletes the row while its cursor is `from`, adds `counts` to the status and counts the
   * fan-out down there (the last one makes the status `done`, at `atMs`).
   * @returns false when it was not at `from`
   * @throws TransactionConflictError as `advance`
   */
  finish(
    progress: FanOutProgress,
    input: { from: string; counts: StepCounts; atMs: number },
  ): Promise<boolean>;
  /** Rows not advanced since `beforeMs`, at most `limit`. */
  stalled(beforeMs: number, limit: number): Promise<FanOutProgress[]>;
}

/** Where fan-out steps are queued: the regeneration queue, as another message type. */
export interface FanOutQueue {
  sendFanOut(
    body: string,
    options: { readonly deduplicationId: string; readonly groupId: string },
  ): Promise<void>;
}
