import { LeaseCondition } from '../../../core/page/lease.js';

/**
 * Condition expressions of the cache table, as named fragments. Every attribute is referenced as
 * `#<attribute name>` (`ttl` and `status` are DynamoDB reserved words), so the names map can be
 * derived from the expression itself.
 */
export const Guard = {
  /** LOCK free or expired (acquire): the lease rule, `LeaseCondition.free` (core/page/lease.ts). */
  leaseFree: LeaseCondition.free,
  /** Nobody took the lease over (refresh, release, publish): `LeaseCondition.token`. */
  leaseToken: LeaseCondition.token,
  /** The caller's lease has not run out on its own clock (publish): `LeaseCondition.live`. */
  leaseLive: LeaseCondition.live,
  /**
   * No revalidation marked LOCK since this lease rendered: a render that started before a
   * revalidation must not publish (publish).
   */
  notRevalidated: '(attribute_not_exists(#revalidated_by))',
  /**
   * On META, the mark the render read under its lease is still there: a revalidation's mark
   * (`revalidated_by`) or expiry since refuses a page that may predate it (publish). One of
   * three, by what the render read: `:seen_mark`, no mark, or no META at all (then only LOCK's
   * mark, `notRevalidated`, can refuse it: a revalidation marks LOCK when META is absent).
   */
  sameMark: '(attribute_exists(#pk) AND #revalidated_by = :seen_mark)',
  /** On META: it is still there and still unmarked (publish, the render read it unmarked). */
  stillUnmarked: '(attribute_exists(#pk) AND attribute_not_exists(#revalidated_by))',
  /** On META: absent, or present without a mark (publish, the render read no META). */
  noMarkSinceAbsent: '(attribute_not_exists(#pk) OR attribute_not_exists(#revalidated_by))',
  /** No row with this key yet: a version row is written once (publish). */
  rowAbsent: '(attribute_not_exists(#pk))',
  /** The row is there: a revalidation marks rows, it never creates them. */
  rowExists: '(attribute_exists(#pk))',
  /** META is absent or not newer than the generation being written: never go backwards (publish). */
  notNewerGeneration: '(attribute_not_exists(#pk) OR #generated_at <= :generated_at)',
  /**
   * The intent's REQ# claim is still open: an intent another delivery already completed is never
   * published a second time, even by a delivery that outlived its claim (seal).
   */
  requestOpen: '(#status = :started)',
  /**
   * On META: it is gone or does not list the version `:sk`: a VER# row is deleted as garbage
   * only while no publish has listed it (sweeper).
   */
  versionUnlisted: '(attribute_not_exists(#pk) OR NOT contains(#version_sks, :sk))',
  /**
   * On META: it is gone or does not carry the tag `:tag`. A page's row under a tag is removed
   * only then, so a row a publish (re)added for its tags stays (tag index).
   */
  tagNotCarried: '(attribute_not_exists(#pk) OR NOT contains(#tags, :tag))',
  /**
   * On LOCK: nobody holds the page's lease. A render indexes the tags it gains before its
   * publish, under its lease: while LOCK is there, such a row may not be in META yet (tag index).
   */
  leaseAbsent: '(attribute_not_exists(#lease_token))',
  /** META still holds the generation the caller saw (failure record, operator's restore). */
  sameGeneration: '(#generated_at = :generated_at)',
  /** META still points at the version the operator read (restore). */
  samePointer: '(#current_sk = :current_sk)',
  /** META, as the operator read it, pointed at no version (restore). */
  noPointer: '(attribute_not_exists(#current_sk))',
  /** Nobody recorded a failure since the caller read the count (failure record). */
  failureCountUnchanged: '(attribute_not_exists(#regen_failures) OR #regen_failures = :previous)',
  /** A REQ# row still has the status the caller read (work resolution). */
  statusIs: '(#status = :status)',
  /**
   * A REQ# row is still in the status index at the time the caller read: a claim taken again or
   * a new failure since moves it, and is left alone (work resolution).
   */
  statusAtUnchanged: '(#status_at = :status_at)',
} as const;

/** Fragments of the REQ# claim condition, mirroring Powertools' own DynamoDB layer. */
export const Claim = {
  /** No row yet for this key. */
  absent: 'attribute_not_exists(#pk)',
  /** The row outlived its idempotency window: the call may run again. */
  expired: '#ttl < :now',
  /** A STARTED row whose invocation ran out of time (crashed or timed out). */
  abandoned: '(#status = :started AND #in_progress_expires_at_ms < :now_ms)',
  /**
   * Only the claimer releases its claim, and only while it is unfinished: a sealed result is
   * never erased by a late failure, and a delivery that outlived its claim cannot release the
   * claim a duplicate took over from it.
   */
  ownOpen: '(#status = :started AND #claim_token = :claim_token)',
} as const;

export const allOf = (...fragments: string[]): string => fragments.join(' AND ');

/** The ExpressionAttributeNames an expression uses: `#name` always stands for attribute `name`. */
export const namesOf = (...expressions: string[]): Record<string, string> => {
  const names: Record<string, string> = {};
  for (const expression of expressions) {
    for (const [token] of expression.matchAll(/#[A-Za-z0-9_]+/g)) names[token] = token.slice(1);
  }
  return names;
};
