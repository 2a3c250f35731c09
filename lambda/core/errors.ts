/**
 * Every outcome a use case or a handler branches on has one thin class here, its row (name, kind,
 * code) in its `extends` clause, and `failureOf` turns any error into what happens next: retryable
 * (SQS redelivery in the worker, 503 + Retry-After at the edge), terminal (the DLQ on the first
 * receive, a 4xx/502 with the reason at the edge) or ignorable (someone else did the work: logged
 * and acknowledged). Errors that never leave their module live there (`RevalidateRequestError`,
 * `ClaimRefused`, the CLI's own).
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

const { Retryable, Terminal, Ignorable } = ErrorKind;

/** Base of every domain error: carries `kind` and a stable `code`, the SDK error as `cause`. */
export abstract class IsrError extends Error {
  abstract override readonly name: string;
  abstract readonly kind: ErrorKind;
  abstract get code(): string;
}

/**
 * One row of the list below: an error's name (in a string: bundles are minified without keeping
 * names), its kind, and its stable code (the DLQ's `isr-error-code`, the edge's `error` field); a
 * class with a reason reports `<code>:<reason>`. Pure, so a bundle keeps only the rows it uses.
 */
/* #__NO_SIDE_EFFECTS__ */
function domainError<const N extends string>(name: N, kind: ErrorKind, code?: string) {
  return class extends IsrError {
    override readonly name = name;
    readonly kind = kind;
    get code(): string {
      return code ?? name;
    }
  };
}

/** The request cannot name a cache entry: a 400 at the edge, poison in the worker. */
export class InvalidCacheKeyError extends domainError(
  'InvalidCacheKeyError',
  Terminal,
  'invalid-cache-key',
) {
  constructor(
    readonly reason: InvalidKeyReason,
    message: string,
  ) {
    super(message);
  }
  override get code(): string {
    return `${super.code}:${this.reason}`;
  }
}

/** What is known of the lease row's current holder when an acquire fails. */
export interface LeaseHolder {
  readonly token: string | undefined;
  readonly expiresAt: number;
  readonly owner: string | undefined;
}

/** Another contender holds a live lease: it is regenerating, so this caller need not. */
export class LeaseHeldError extends domainError('LeaseHeldError', Ignorable, 'lease-held') {
  constructor(
    readonly pk: string,
    readonly holder: LeaseHolder | undefined,
  ) {
    super(`lease on ${pk} is held until ${holder?.expiresAt ?? 'unknown'}`);
  }
}

/** The lease expired or was taken over: a stale writer; nothing it tried to publish was written. */
export class LeaseLostError extends domainError('LeaseLostError', Ignorable, 'lease-lost') {
  constructor(
    readonly pk: string,
    readonly holder: LeaseHolder | undefined,
    options?: ErrorOptions,
  ) {
    super(`lease on ${pk} is no longer owned by this caller`, options);
  }
}

/** META already holds a newer generation than the one being published: never go backwards. */
export class NewerGenerationError extends domainError(
  'NewerGenerationError',
  Ignorable,
  'superseded',
) {
  constructor(
    readonly pk: string,
    readonly currentGeneratedAt: number | undefined,
    options?: ErrorOptions,
  ) {
    super(`META on ${pk} already holds generation ${currentGeneratedAt ?? 'unknown'}`, options);
  }
}

/** Another delivery of the same intent already completed it: this publish would be a second. */
export class RequestAlreadyCompletedError extends domainError(
  'RequestAlreadyCompletedError',
  Ignorable,
  'duplicate',
) {
  constructor(
    readonly pk: string,
    readonly idempotencyKey: string,
    options?: ErrorOptions,
  ) {
    super(`intent ${idempotencyKey} on ${pk} was already completed`, options);
  }
}

/** A transaction cancelled for a reason that passes: the SDK does not retry those, we do. */
export class TransactionConflictError extends domainError(
  'TransactionConflictError',
  Retryable,
  'transaction-conflict',
) {}

/** A revalidation marked the LOCK during the render: that page may predate it, so render again. */
export class RevalidatedDuringRenderError extends domainError(
  'RevalidatedDuringRenderError',
  Retryable,
  'revalidated-during-render',
) {
  constructor(
    readonly pk: string,
    options?: ErrorOptions,
  ) {
    super(`a revalidation of ${pk} came during the render`, options);
  }
}

/** META points at a body that is not in the bucket: treat the entry as a miss. */
export class BodyNotFoundError extends domainError('BodyNotFoundError', Ignorable, 'body-missing') {
  constructor(
    readonly s3Key: string,
    options?: ErrorOptions,
  ) {
    super(`body ${s3Key} is missing`, options);
  }
}

/** The renderer failed in a way that may pass (5xx, 429, timeout): keep the last good page. */
export class RenderRetryableError extends domainError(
  'RenderRetryableError',
  Retryable,
  'render-failed',
) {
  constructor(
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Every render slot of the MISS admission cap is taken: a 503 with Retry-After at once. */
export class RenderOverloadedError extends domainError(
  'RenderOverloadedError',
  Retryable,
  'overloaded',
) {}

/**
 * The answer must not be stored: the viewer gets a pass-through of their own request instead,
 * and the key is remembered as pass for a while (hit-for-pass, `regenerate`). The last good page
 * is never replaced by it. Terminal wherever it is not turned into a pass: the DLQ, or a 502.
 */
export class RenderRefusedError extends domainError('RenderRefusedError', Terminal, 'refused') {
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
  override get code(): string {
    return `${super.code}:${this.reason}`;
  }
}

/** The viewer gets `failure.status`; nothing is stored or retried (it may not be idempotent). */
export class PassThroughError extends domainError('PassThroughError', Terminal) {
  constructor(
    readonly failure: PassFailure,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
  override get code(): string {
    return this.failure.code;
  }
}

/** A queue message that can never be processed (bad JSON, wrong shape). */
export class InvalidMessageError extends domainError(
  'InvalidMessageError',
  Terminal,
  'invalid-message',
) {}

/** A published page's soft purge was not queued: the intent's redelivery sends it again. */
export class SoftPurgeNotQueuedError extends domainError(
  'SoftPurgeNotQueuedError',
  Retryable,
  'soft-purge-not-queued',
) {}

/** Configuration is missing or malformed: raised once, at cold start. */
export class ConfigError extends domainError('ConfigError', Terminal, 'invalid-config') {}

/** Which of an operator's version requests could not be carried out, and why. */
export type VersionRequestCode =
  | 'page-not-found'
  | 'no-versions'
  | 'version-not-kept'
  | 'nothing-older'
  | 'already-live'
  | 'ambiguous-version'
  | 'version-body-missing'
  | 'hold-out-of-bounds';

/** An operator's request about a page's versions cannot be carried out; nothing was written. */
export class VersionRequestError extends domainError('VersionRequestError', Terminal) {
  constructor(
    private readonly versionCode: VersionRequestCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
  override get code(): VersionRequestCode {
    return this.versionCode;
  }
}

/** META changed between an operator's read and write: nothing changed; run it again. */
export class PageChangedError extends domainError('PageChangedError', Retryable, 'page-changed') {
  constructor(
    readonly pk: string,
    options?: ErrorOptions,
  ) {
    super(`META of ${pk} changed since it was read; nothing was written`, options);
  }
}

/** The CDN refused a purge for good: the caller must learn of it, the CDN keeps its copies. */
export class CdnPurgeRejectedError extends domainError(
  'CdnPurgeRejectedError',
  Terminal,
  'cdn-purge-rejected',
) {
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
