/**
 * Every outcome a use case or a handler branches on has one error class here, and `failureOf` is
 * the one place that turns an error into what happens next. Errors that never leave the module
 * that throws them live there: `RevalidateRequestError` (a request's 400/413, answered inside the
 * revalidate use case), `ClaimRefused` (inside the request-store adapters), the CLI's own. `kind` decides it: retryable (try again later: SQS
 * redelivery in the worker, 503 + Retry-After at the edge), terminal (never retried: the DLQ on
 * the first receive in the worker, a 4xx/502 with the reason at the edge), or ignorable (someone
 * else is doing or has done the work: logged and acknowledged).
 */
import type { InvalidKeyReason, PassFailure, RefusalReason } from './reasons.js';

/** The closed sets of reasons the errors carry, for the callers that build them. */
export { InvalidKeyReason, PassFailure, RefusalReason } from './reasons.js';

/** The code of a message given up on after its last receive (the worker's, the purger's). */
export const RETRIES_EXHAUSTED = 'retries-exhausted';

export const ErrorKind = {
  Retryable: 'retryable',
  Terminal: 'terminal',
  Ignorable: 'ignorable',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/**
 * Base of every domain error: carries `kind` and a stable `code`, keeps the SDK error as `cause`.
 * Each class names itself in a string: bundles are minified without keeping names.
 */
export abstract class IsrError extends Error {
  abstract override readonly name: string;
  abstract readonly kind: ErrorKind;
  /** Stable, machine-readable reason: the DLQ's `isr-error-code`, the edge's `error` field. */
  abstract get code(): string;
}

/** The request cannot name a cache entry: answered with a 400 at the edge, poison in the worker. */
export class InvalidCacheKeyError extends IsrError {
  override readonly name = 'InvalidCacheKeyError';
  readonly kind = ErrorKind.Terminal;
  constructor(
    readonly reason: InvalidKeyReason,
    message: string,
  ) {
    super(message);
  }
  get code(): string {
    return `invalid-cache-key:${this.reason}`;
  }
}

/** What is known of the lease row's current holder when an acquire fails. */
export interface LeaseHolder {
  readonly token: string | undefined;
  readonly expiresAt: number;
  readonly owner: string | undefined;
}

/** Another contender holds a live lease: it is regenerating, so this caller need not. */
export class LeaseHeldError extends IsrError {
  override readonly name = 'LeaseHeldError';
  readonly kind = ErrorKind.Ignorable;
  readonly code = 'lease-held';
  constructor(
    readonly pk: string,
    readonly holder: LeaseHolder | undefined,
  ) {
    super(`lease on ${pk} is held until ${holder?.expiresAt ?? 'unknown'}`);
  }
}

/**
 * The caller's lease expired or was taken over: it is a stale writer and its result must be
 * dropped. Nothing it tried to publish was written.
 */
export class LeaseLostError extends IsrError {
  override readonly name = 'LeaseLostError';
  readonly kind = ErrorKind.Ignorable;
  readonly code = 'lease-lost';
  constructor(
    readonly pk: string,
    readonly holder: LeaseHolder | undefined,
    options?: ErrorOptions,
  ) {
    super(`lease on ${pk} is no longer owned by this caller`, options);
  }
}

/** META already holds a newer generation than the one being published: never go backwards. */
export class NewerGenerationError extends IsrError {
  override readonly name = 'NewerGenerationError';
  readonly kind = ErrorKind.Ignorable;
  readonly code = 'superseded';
  constructor(
    readonly pk: string,
    readonly currentGeneratedAt: number | undefined,
    options?: ErrorOptions,
  ) {
    super(`META on ${pk} already holds generation ${currentGeneratedAt ?? 'unknown'}`, options);
  }
}

/** Another delivery of the same intent already completed it: this publish would be a second one. */
export class RequestAlreadyCompletedError extends IsrError {
  override readonly name = 'RequestAlreadyCompletedError';
  readonly kind = ErrorKind.Ignorable;
  readonly code = 'duplicate';
  constructor(
    readonly pk: string,
    readonly idempotencyKey: string,
    options?: ErrorOptions,
  ) {
    super(`intent ${idempotencyKey} on ${pk} was already completed`, options);
  }
}

/**
 * A publish transaction was cancelled for a reason that passes (TransactionConflict with a
 * contender, throttling inside the transaction). The SDK does not retry cancellations, so the
 * publish does, a few times.
 */
export class TransactionConflictError extends IsrError {
  override readonly name = 'TransactionConflictError';
  readonly kind = ErrorKind.Retryable;
  readonly code = 'transaction-conflict';
}

/**
 * A revalidation marked the lease's LOCK while this caller rendered: its page may predate the
 * revalidation, so it is not published; the caller renders again (and, out of attempts, the
 * intent is retried).
 */
export class RevalidatedDuringRenderError extends IsrError {
  override readonly name = 'RevalidatedDuringRenderError';
  readonly kind = ErrorKind.Retryable;
  readonly code = 'revalidated-during-render';
  constructor(
    readonly pk: string,
    options?: ErrorOptions,
  ) {
    super(`a revalidation of ${pk} came during the render`, options);
  }
}

/** META points at a body that is not in the bucket: treat the entry as a miss. */
export class BodyNotFoundError extends IsrError {
  override readonly name = 'BodyNotFoundError';
  readonly kind = ErrorKind.Ignorable;
  readonly code = 'body-missing';
  constructor(
    readonly s3Key: string,
    options?: ErrorOptions,
  ) {
    super(`body ${s3Key} is missing`, options);
  }
}

/** The renderer failed in a way that may pass (5xx, 429, timeout, network): keep the last good page. */
export class RenderRetryableError extends IsrError {
  override readonly name = 'RenderRetryableError';
  readonly kind = ErrorKind.Retryable;
  readonly code = 'render-failed';
  constructor(
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Every render slot of the MISS admission cap is taken: the viewer gets a 503 with Retry-After
 * (or the fallback page) at once instead of waiting in line.
 */
export class RenderOverloadedError extends IsrError {
  override readonly name = 'RenderOverloadedError';
  readonly kind = ErrorKind.Retryable;
  readonly code = 'overloaded';
}

/**
 * The answer must not be stored: the viewer gets a pass-through of their own request instead,
 * and the key is remembered as pass for a while (hit-for-pass, `regenerate`). The last good page
 * is never replaced by it. Terminal wherever it is not turned into a pass: the DLQ, or a 502.
 */
export class RenderRefusedError extends IsrError {
  override readonly name = 'RenderRefusedError';
  readonly kind = ErrorKind.Terminal;
  readonly trafficClass: 'pass' | 'static';
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly status?: number,
    options?: ErrorOptions & {
      /** `static` for an immutable answer (CloudFront keeps it); pass otherwise. */
      readonly trafficClass?: 'pass' | 'static';
    },
  ) {
    super(message, options);
    this.trafficClass = options?.trafficClass ?? 'pass';
  }
  get code(): string {
    return `refused:${this.reason}`;
  }
}

/**
 * A pass-through could not give the viewer the upstream's answer. Terminal: nothing was stored
 * and nothing is retried (the request may not be idempotent); the viewer gets `failure.status`.
 */
export class PassThroughError extends IsrError {
  override readonly name = 'PassThroughError';
  readonly kind = ErrorKind.Terminal;
  constructor(
    readonly failure: PassFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
  get code(): string {
    return this.failure.code;
  }
}

/** A queue message that can never be processed (bad JSON, wrong shape). */
export class InvalidMessageError extends IsrError {
  override readonly name = 'InvalidMessageError';
  readonly kind = ErrorKind.Terminal;
  readonly code = 'invalid-message';
}

/**
 * A published page's soft purge could not be queued: the intent is not acknowledged, so its
 * redelivery (which finds the page published) sends the purge again.
 */
export class SoftPurgeNotQueuedError extends IsrError {
  override readonly name = 'SoftPurgeNotQueuedError';
  readonly kind = ErrorKind.Retryable;
  readonly code = 'soft-purge-not-queued';
}

/** Configuration is missing or malformed: raised once, at cold start. */
export class ConfigError extends IsrError {
  override readonly name = 'ConfigError';
  readonly kind = ErrorKind.Terminal;
  readonly code = 'invalid-config';
}

/**
 * An operator's request about a page's versions cannot be carried out as asked (no such page, no
 * such kept version, nothing older to go back to, a hold out of bounds). `code` says which;
 * nothing was written.
 */
export class VersionRequestError extends IsrError {
  override readonly name = 'VersionRequestError';
  readonly kind = ErrorKind.Terminal;
  constructor(
    readonly code:
      | 'page-not-found'
      | 'no-versions'
      | 'version-not-kept'
      | 'nothing-older'
      | 'already-live'
      | 'ambiguous-version'
      | 'version-body-missing'
      | 'hold-out-of-bounds',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * META changed between an operator's read and write (a publish, another rollback): the write
 * was refused and nothing changed. Running the command again decides against the new META.
 */
export class PageChangedError extends IsrError {
  override readonly name = 'PageChangedError';
  readonly kind = ErrorKind.Retryable;
  readonly code = 'page-changed';
  constructor(
    readonly pk: string,
    options?: ErrorOptions,
  ) {
    super(`META of ${pk} changed since it was read; nothing was written`, options);
  }
}

/**
 * The CDN refused a purge in a way no retry fixes (a malformed item, access denied, no such
 * distribution): the caller must learn of it, since the CDN keeps serving its copies.
 */
export class CdnPurgeRejectedError extends IsrError {
  override readonly name = 'CdnPurgeRejectedError';
  readonly kind = ErrorKind.Terminal;
  readonly code = 'cdn-purge-rejected';
  constructor(
    /** Undefined when the purge was refused before it had an identity (an invalid tag). */
    readonly purgeId: string | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** What an error means for the caller: how to react, and the reason to report. */
export interface Failure {
  readonly kind: ErrorKind;
  readonly code: string;
  readonly message: string;
}

/**
 * The one classification every caller uses. Domain errors carry their kind; anything else
 * (an SDK error the SDK's own retries could not get past, a bug) is retryable: the intent is
 * kept and tried again, and the budget of receives bounds it.
 */
export function failureOf(error: unknown): Failure {
  if (error instanceof IsrError) {
    return { kind: error.kind, code: error.code, message: error.message };
  }
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return { kind: ErrorKind.Retryable, code: `error:${name}`, message: `${name}: ${message}` };
}
