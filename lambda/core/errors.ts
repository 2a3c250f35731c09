/**
 * Every outcome a caller branches on has one error class here. `kind` says what the caller does:
 * retry later, give up for good (terminal: a 4xx at the edge, the DLQ in the worker), or carry on
 * because someone else is doing, or has done, the work.
 */
export const ErrorKind = {
  Retryable: 'retryable',
  Terminal: 'terminal',
  Ignorable: 'ignorable',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

/** Base of every domain error: carries `kind` and keeps the SDK error as `cause`. */
export abstract class IsrError extends Error {
  abstract readonly kind: ErrorKind;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

export const InvalidKeyReason = {
  InvalidPath: 'invalid-path',
  Traversal: 'traversal',
  EncodedSeparator: 'encoded-separator',
  EncodedDot: 'encoded-dot',
  Backslash: 'backslash',
  ControlCharacter: 'control-character',
  MalformedEncoding: 'malformed-encoding',
  DoubleEncoding: 'double-encoding',
  TooLong: 'too-long',
  InvalidTenant: 'invalid-tenant',
  MissingTenant: 'missing-tenant',
} as const;
export type InvalidKeyReason = (typeof InvalidKeyReason)[keyof typeof InvalidKeyReason];

/** The request cannot name a cache entry: answered with a 400 at the edge, poison in the worker. */
export class InvalidCacheKeyError extends IsrError {
  readonly kind = ErrorKind.Terminal;
  constructor(
    readonly reason: InvalidKeyReason,
    message: string,
  ) {
    super(message);
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
  readonly kind = ErrorKind.Ignorable;
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
  readonly kind = ErrorKind.Ignorable;
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
  readonly kind = ErrorKind.Ignorable;
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
  readonly kind = ErrorKind.Ignorable;
  constructor(
    readonly pk: string,
    readonly idempotencyKey: string,
    options?: ErrorOptions,
  ) {
    super(`intent ${idempotencyKey} on ${pk} was already completed`, options);
  }
}

/** A transient store failure (transaction conflict, throttling): the same call may succeed later. */
export class RetryableStoreError extends IsrError {
  readonly kind = ErrorKind.Retryable;
}

/** META points at a body that is not in the bucket: treat the entry as a miss. */
export class BodyNotFoundError extends IsrError {
  readonly kind = ErrorKind.Ignorable;
  constructor(
    readonly s3Key: string,
    options?: ErrorOptions,
  ) {
    super(`body ${s3Key} is missing`, options);
  }
}

/** The renderer failed in a way that may pass (5xx, timeout, network): keep the last good page. */
export class RenderRetryableError extends IsrError {
  readonly kind = ErrorKind.Retryable;
  constructor(
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The renderer refused the page for good (a 4xx other than 404/410, an oversized body). */
export class RenderRejectedError extends IsrError {
  readonly kind = ErrorKind.Terminal;
  constructor(
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A queue message that can never be processed (bad JSON, wrong shape, invalid key). */
export class InvalidMessageError extends IsrError {
  readonly kind = ErrorKind.Terminal;
}

/** Configuration is missing or malformed: raised once, at cold start. */
export class ConfigError extends IsrError {
  readonly kind = ErrorKind.Terminal;
}

/** True for errors a caller should retry (domain-classified, or unknown infrastructure errors). */
export const isRetryable = (error: unknown): boolean =>
  !(error instanceof IsrError) || error.kind === ErrorKind.Retryable;
