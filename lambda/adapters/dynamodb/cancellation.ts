import type { CancellationReason } from '@aws-sdk/client-dynamodb';
import {
  LeaseLostError,
  NewerGenerationError,
  RequestAlreadyCompletedError,
  RetryableStoreError,
  type IsrError,
} from '../../core/errors.js';
import { itemToHolder, num } from './items.js';

/** What each action of the publish transaction stands for, in order. */
export const PublishAction = {
  PutMeta: 'put-meta',
  DeleteLock: 'delete-lock',
  SealRequest: 'seal-request',
} as const;
export type PublishAction = (typeof PublishAction)[keyof typeof PublishAction];

/** Cancellation codes that say "try the same thing again", not "your condition is false". */
const TRANSIENT_CODES = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

/** Errors DynamoDB raises outside a cancellation that pass with time. */
const TRANSIENT_ERRORS = new Set([
  'TransactionInProgressException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
]);

/**
 * Reads `CancellationReasons` rather than assuming every cancellation means "lease not owned":
 * a failed LOCK condition means the lease was lost, a failed META condition means a newer
 * generation is live, a failed REQ# condition means another delivery already completed the
 * intent, and conflicts or throttling are worth a retry. Returns undefined for
 * anything else, which the caller rethrows as is.
 */
export function classifyPublishFailure(
  error: unknown,
  pk: string,
  actions: readonly PublishAction[],
  idempotencyKey?: string,
): IsrError | undefined {
  if (!(error instanceof Error)) return undefined;
  if (TRANSIENT_ERRORS.has(error.name)) {
    return new RetryableStoreError(`publish on ${pk} failed transiently: ${error.name}`, {
      cause: error,
    });
  }
  if (error.name !== 'TransactionCanceledException') return undefined;
  const reasons: CancellationReason[] =
    (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
  const reasonFor = (action: PublishAction): CancellationReason | undefined =>
    reasons[actions.indexOf(action)];

  const lock = reasonFor(PublishAction.DeleteLock);
  if (lock?.Code === 'ConditionalCheckFailed') {
    return new LeaseLostError(pk, itemToHolder(lock.Item), { cause: error });
  }
  const meta = reasonFor(PublishAction.PutMeta);
  if (meta?.Code === 'ConditionalCheckFailed') {
    const current = meta.Item === undefined ? undefined : num(meta.Item, 'generated_at');
    return new NewerGenerationError(pk, current, { cause: error });
  }
  const seal = reasonFor(PublishAction.SealRequest);
  if (seal?.Code === 'ConditionalCheckFailed' && idempotencyKey !== undefined) {
    return new RequestAlreadyCompletedError(pk, idempotencyKey, { cause: error });
  }
  if (reasons.some((reason) => TRANSIENT_CODES.has(reason.Code ?? ''))) {
    const codes = reasons.map((reason) => reason.Code ?? 'None').join(', ');
    return new RetryableStoreError(`publish on ${pk} was cancelled transiently: [${codes}]`, {
      cause: error,
    });
  }
  return undefined;
}
