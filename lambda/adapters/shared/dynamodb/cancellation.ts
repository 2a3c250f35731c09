import {
  TransactWriteItemsCommand,
  type AttributeValue,
  type CancellationReason,
  type DynamoDBClient,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import type { CacheMeta, Lease } from '../../../core/page/model.js';
import {
  LeaseLostError,
  NewerGenerationError,
  RequestAlreadyCompletedError,
  RevalidatedDuringRenderError,
  TransactionConflictError,
  type IsrError,
} from '../../../core/errors.js';
import { assertUnderLease } from '../../../core/page/lease.js';
import { leasedLockDelete } from './conditions.js';
import { itemToHolder, num, type Item } from './items.js';

/** What each action of the publish transaction stands for, in order. */
export const PublishAction = {
  PutMeta: 'put-meta',
  DeleteLock: 'delete-lock',
  SealRequest: 'seal-request',
  PutVersion: 'put-version',
} as const;
export type PublishAction = (typeof PublishAction)[keyof typeof PublishAction];

/** Cancellation codes that say "try the same thing again", not "your condition is false". */
export const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

/**
 * A transaction DynamoDB cancelled: its reasons (the items as they were, with
 * `ReturnValuesOnConditionCheckFailure`), whether a condition failed, or else whether another
 * writer conflicted (transaction-apis.html#transaction-conflict-handling).
 */
export interface CancelledTransaction {
  readonly error: Error;
  readonly reasons: readonly CancellationReason[];
  readonly failed: boolean;
  readonly conflict: boolean;
}

/** One TransactWriteItems: undefined when it committed, else why it was cancelled. */
export async function transactOrCancelled(
  db: DynamoDBClient,
  items: TransactWriteItem[],
): Promise<CancelledTransaction | undefined> {
  try {
    await db.send(new TransactWriteItemsCommand({ TransactItems: items }));
    return undefined;
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') throw error;
    const reasons = (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons;
    const failed = (reasons ?? []).some((reason) => reason.Code === 'ConditionalCheckFailed');
    const conflict = !failed && (reasons ?? []).some((r) => TRANSIENT_CODES.has(r.Code ?? ''));
    return { error, reasons: reasons ?? [], failed, conflict };
  }
}

/** What a publish wrote META from: the generation, and META as its render read it. */
export interface PublishedFrom {
  readonly meta: CacheMeta;
  readonly observed: CacheMeta | undefined;
  readonly idempotencyKey?: string | undefined;
}

/**
 * Reads `CancellationReasons` rather than assuming every cancellation means "lease not owned":
 * a failed LOCK condition means the lease was lost (or, with our token still there, that a
 * revalidation marked it during the render), a failed META condition means a newer generation
 * is live or a revalidation marked or expired META since the render read it, a failed REQ#
 * condition means another delivery already completed the intent, and conflicts or throttling
 * inside the transaction are worth a retry (the SDK retries throttled and failed calls itself,
 * but never a cancelled transaction). Returns undefined for anything else, which the caller
 * rethrows as is.
 */
export function classifyPublishFailure(
  error: unknown,
  lease: { readonly pk: string; readonly token: string },
  actions: readonly PublishAction[],
  publishing?: PublishedFrom,
): IsrError | undefined {
  const { pk } = lease;
  if (!(error instanceof Error)) return undefined;
  if (error.name !== 'TransactionCanceledException') return undefined;
  const reasons: CancellationReason[] =
    (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
  const reasonFor = (action: PublishAction): CancellationReason | undefined =>
    reasons[actions.indexOf(action)];

  const lock = reasonFor(PublishAction.DeleteLock);
  if (lock?.Code === 'ConditionalCheckFailed') {
    // Still our lease, marked by a revalidation: render again rather than publish.
    if (lock.Item?.lease_token?.S === lease.token && lock.Item.revalidated_by !== undefined) {
      return new RevalidatedDuringRenderError(pk, { cause: error });
    }
    return new LeaseLostError(pk, itemToHolder(lock.Item), { cause: error });
  }
  const meta = reasonFor(PublishAction.PutMeta);
  if (meta?.Code === 'ConditionalCheckFailed') {
    const current = meta.Item === undefined ? undefined : num(meta.Item, 'generated_at');
    const newer = current !== undefined && current > (publishing?.meta.generatedAt ?? -1);
    if (!newer && publishing !== undefined && markMoved(publishing.observed, meta.Item)) {
      return new RevalidatedDuringRenderError(pk, { cause: error });
    }
    return new NewerGenerationError(pk, current, { cause: error });
  }
  const seal = reasonFor(PublishAction.SealRequest);
  if (seal?.Code === 'ConditionalCheckFailed' && publishing?.idempotencyKey !== undefined) {
    return new RequestAlreadyCompletedError(pk, publishing.idempotencyKey, { cause: error });
  }
  if (reasons.some((reason) => TRANSIENT_CODES.has(reason.Code ?? ''))) {
    const codes = reasons.map((reason) => reason.Code ?? 'None').join(', ');
    return new TransactionConflictError(`publish on ${pk} was cancelled transiently: [${codes}]`, {
      cause: error,
    });
  }
  return undefined;
}

/** A revalidation marked or expired META since the render read it (`Guard.sameMark`). */
function markMoved(
  observed: CacheMeta | undefined,
  live: Record<string, AttributeValue> | undefined,
): boolean {
  if (observed !== undefined && live === undefined) return true;
  return live?.revalidated_by?.S !== observed?.revalidatedBy;
}

/**
 * A row written in place of a publish (a hit-for-pass mark, a gone page): the lease's own page's
 * row, Put with Delete LOCK on this caller's live, unmarked lease, `after` appended, in one
 * TransactWriteItems; a refusal is classified as a publish's is (LOCK's reason is second).
 */
export async function putInPlaceOfPublish(
  client: DynamoDBClient,
  tableName: string,
  under: { readonly lease: Lease; readonly now: number },
  row: { readonly what: string; readonly pk: string; readonly item: Item },
  after: readonly TransactWriteItem[] = [],
): Promise<void> {
  const { lease, now } = under;
  assertUnderLease(row.what, row.pk, lease);
  const actions = [PublishAction.PutMeta, PublishAction.DeleteLock];
  try {
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: tableName, Item: row.item } },
          leasedLockDelete(tableName, lease, { now, unmarked: true }),
          ...after,
        ],
      }),
    );
  } catch (error) {
    throw classifyPublishFailure(error, lease, actions) ?? error;
  }
}
