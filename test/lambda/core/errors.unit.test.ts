import { describe, expect, it } from '@jest/globals';
import * as errors from '../../../lambda/core/errors.js';
import {
  BodyNotFoundError,
  CdnPurgeRejectedError,
  ConfigError,
  ErrorKind,
  failureOf,
  InvalidCacheKeyError,
  InvalidKeyReason,
  InvalidMessageError,
  IsrError,
  LeaseHeldError,
  LeaseLostError,
  NewerGenerationError,
  PageChangedError,
  PassFailure,
  PassThroughError,
  RefusalReason,
  RenderOverloadedError,
  RenderRefusedError,
  RenderRetryableError,
  RequestAlreadyCompletedError,
  RevalidatedDuringRenderError,
  SoftPurgeNotQueuedError,
  TransactionConflictError,
  VersionRequestError,
} from '../../../lambda/core/errors.js';

/** One instance of every error class the module exports (the test below checks none is left out). */
const samples: Readonly<Record<string, IsrError>> = {
  InvalidCacheKeyError: new InvalidCacheKeyError(InvalidKeyReason.Traversal, 'no'),
  LeaseHeldError: new LeaseHeldError('P', undefined),
  LeaseLostError: new LeaseLostError('P', undefined),
  NewerGenerationError: new NewerGenerationError('P', 5),
  RequestAlreadyCompletedError: new RequestAlreadyCompletedError('P', 'k'),
  TransactionConflictError: new TransactionConflictError('cancelled'),
  RevalidatedDuringRenderError: new RevalidatedDuringRenderError('P'),
  BodyNotFoundError: new BodyNotFoundError('b/1'),
  RenderRetryableError: new RenderRetryableError('503', 503),
  RenderOverloadedError: new RenderOverloadedError('full'),
  RenderRefusedError: new RenderRefusedError(RefusalReason.SetCookie, 'cookie'),
  PassThroughError: new PassThroughError(PassFailure.Timeout, 'slow'),
  InvalidMessageError: new InvalidMessageError('bad'),
  SoftPurgeNotQueuedError: new SoftPurgeNotQueuedError('down'),
  ConfigError: new ConfigError('missing'),
  VersionRequestError: new VersionRequestError('nothing-older', 'none'),
  PageChangedError: new PageChangedError('P'),
  CdnPurgeRejectedError: new CdnPurgeRejectedError('id', 'denied'),
};

/** The code every instance of a class reports, with its reason or failure cut off. */
const familyOf = (error: IsrError) =>
  error instanceof PassThroughError || error instanceof VersionRequestError
    ? error.name
    : error.code.replace(/:.*$/, '');

/**
 * Where the rows disagree: an instance named other than its export, a kind outside `ErrorKind`,
 * or a code family two classes report.
 */
function rowProblems(rows: Readonly<Record<string, IsrError>>): string[] {
  const problems: string[] = [];
  const owners = new Map<string, string>();
  const kinds: readonly string[] = Object.values(ErrorKind);
  for (const [exported, error] of Object.entries(rows)) {
    if (error.name !== exported) problems.push(`${exported}: named ${error.name}`);
    if (!kinds.includes(error.kind)) problems.push(`${exported}: kind ${error.kind}`);
    const family = familyOf(error);
    const owner = owners.get(family);
    if (owner !== undefined) problems.push(`${exported}: code ${family} is ${owner}'s`);
    owners.set(family, exported);
  }
  return problems;
}

/** Each class's kind and code as they were when the classes each spelled theirs out. */
const ROWS = {
  InvalidCacheKeyError: ['terminal', 'invalid-cache-key:traversal'],
  LeaseHeldError: ['ignorable', 'lease-held'],
  LeaseLostError: ['ignorable', 'lease-lost'],
  NewerGenerationError: ['ignorable', 'superseded'],
  RequestAlreadyCompletedError: ['ignorable', 'duplicate'],
  TransactionConflictError: ['retryable', 'transaction-conflict'],
  RevalidatedDuringRenderError: ['retryable', 'revalidated-during-render'],
  BodyNotFoundError: ['ignorable', 'body-missing'],
  RenderRetryableError: ['retryable', 'render-failed'],
  RenderOverloadedError: ['retryable', 'overloaded'],
  RenderRefusedError: ['terminal', 'refused:set-cookie'],
  PassThroughError: ['terminal', 'pass-timeout'],
  InvalidMessageError: ['terminal', 'invalid-message'],
  SoftPurgeNotQueuedError: ['retryable', 'soft-purge-not-queued'],
  ConfigError: ['terminal', 'invalid-config'],
  VersionRequestError: ['terminal', 'nothing-older'],
  PageChangedError: ['retryable', 'page-changed'],
  CdnPurgeRejectedError: ['terminal', 'cdn-purge-rejected'],
};

describe('the error classes, one row each', () => {
  it('covers every error class the module exports', () => {
    const exported = Object.entries(errors)
      .filter(([, value]) => typeof value === 'function' && value.prototype instanceof IsrError)
      .map(([name]) => name);
    expect(exported.sort()).toEqual(Object.keys(samples).sort());
  });

  it('gives every class its name, one kind and its own code, and failureOf reports them', () => {
    expect(rowProblems(samples)).toEqual([]);
    for (const [name, error] of Object.entries(samples)) {
      expect([name, error.kind, error.code]).toEqual([name, ...ROWS[name as keyof typeof ROWS]]);
      expect(failureOf(error)).toEqual({
        kind: error.kind,
        code: error.code,
        message: error.message,
      });
    }
    const kinds = new Set(Object.values(samples).map((error) => error.kind));
    expect([...kinds].sort()).toEqual(Object.values(ErrorKind).sort());
  });

  it("catches a class misnamed, of no kind, or reporting another class's code", () => {
    class Misnamed extends IsrError {
      override readonly name = 'LeaseHeldError';
      readonly kind = ErrorKind.Ignorable;
      readonly code = 'misnamed';
    }
    class Kindless extends IsrError {
      override readonly name = 'Kindless';
      readonly kind = 'fatal' as ErrorKind;
      readonly code = 'kindless';
    }
    class Copycat extends IsrError {
      override readonly name = 'Copycat';
      readonly kind = ErrorKind.Retryable;
      readonly code = 'lease-lost';
    }
    const rogue = { Misnamed: new Misnamed(), Kindless: new Kindless(), Copycat: new Copycat() };
    expect(rowProblems({ ...samples, ...rogue })).toEqual([
      'Misnamed: named LeaseHeldError',
      'Kindless: kind fatal',
      "Copycat: code lease-lost is LeaseLostError's",
    ]);
  });

  it('keeps the reason, the status and the cause the callers read', () => {
    const cause = new Error('ConditionalCheckFailed');
    expect(new LeaseLostError('P', undefined, { cause }).cause).toBe(cause);
    expect(new RenderRetryableError('x', undefined, { cause }).cause).toBe(cause);
    expect(samples.InvalidCacheKeyError.code).toBe('invalid-cache-key:traversal');
    expect(samples.RenderRefusedError.code).toBe('refused:set-cookie');
    expect((samples.RenderRefusedError as RenderRefusedError).trafficClass).toBe('pass');
    expect(samples.PassThroughError).toMatchObject({
      code: 'pass-timeout',
      failure: { status: 504 },
    });
    expect(samples.VersionRequestError.code).toBe('nothing-older');
    expect(samples.NewerGenerationError).toMatchObject({ pk: 'P', currentGeneratedAt: 5 });
    expect(samples.LeaseHeldError).toBeInstanceOf(IsrError);
    expect(samples.LeaseHeldError).toBeInstanceOf(Error);
    expect(failureOf(new TypeError('boom'))).toEqual({
      kind: ErrorKind.Retryable,
      code: 'error:TypeError',
      message: 'TypeError: boom',
    });
  });
});
