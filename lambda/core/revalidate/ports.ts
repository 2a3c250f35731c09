/**
 * The ports only revalidation needs: the marks it writes on pages, the tag index as it reads
 * it, its statuses, its fan-outs' progress rows and the queues it sends to. The ports every use
 * case shares are in `core/page/ports.ts`.
 */
import type { QueuedIntent } from '../page/intent.js';
import type { CacheMeta } from '../page/model.js';
import type {
  RegenerationQueue,
  TagPageCount,
  TagPageCounter,
  TagRowRemoval,
} from '../page/ports.js';
import type { QueuedPurge } from './purge-message.js';

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
