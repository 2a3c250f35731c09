import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { LeaseHeldError, LeaseLostError } from '../../core/errors.js';
import { assertUnderLease, LOCK_TTL_BUFFER_SECONDS, lockTtlOf } from '../../core/page/lease.js';
import type {
  AcquireLeaseInput,
  CacheTable,
  MarkPassInput,
  PublishInput,
  RecordFailureInput,
  RefreshInput,
  StoreGoneInput,
} from '../../core/page/ports.js';
import type { AcquiredLease, CacheMeta, Lease, PageRows } from '../../core/page/model.js';
import { IndexedStatus, RequestStatus, SortKey, statusShardOf } from '../../core/page/rows.js';
import { PublishAction, classifyPublishFailure } from '../shared/dynamodb/cancellation.js';
import {
  Guard,
  allOf,
  leaseHeld,
  leasedLockDelete,
  namesOf,
} from '../shared/dynamodb/conditions.js';
import {
  itemToHolder,
  itemToMeta,
  keyOf,
  leaseToItem,
  metaToItem,
  versionToItem,
} from '../shared/dynamodb/items.js';
import { requestKey, sealUpdate } from '../shared/dynamodb/request-row.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { readPageRows, writePassMark } from '../shared/dynamodb/pass-mark.js';
import { refreshGeneration } from '../shared/dynamodb/refresh.js';
import { writeGonePage } from '../shared/dynamodb/gone-page.js';
import { DynamoTableAdapter, type TableOptions } from '../shared/dynamodb/table.js';

export interface DynamoCacheTableOptions extends TableOptions {
  /** How long after expiry DynamoDB TTL may collect a LOCK row. @default LOCK_TTL_BUFFER_SECONDS */
  readonly lockTtlBufferSeconds?: number;
}

/**
 * The cache table on DynamoDB: META reads (with the hit-for-pass mark, `pass-mark.ts`), the LOCK
 * lease, and the publish transaction.
 */
export class DynamoCacheTable extends DynamoTableAdapter implements CacheTable {
  readonly #lockTtlBuffer: number;

  constructor(options: DynamoCacheTableOptions) {
    super(options);
    this.#lockTtlBuffer = options.lockTtlBufferSeconds ?? LOCK_TTL_BUFFER_SECONDS;
  }

  async getMeta(
    pk: string,
    options: { consistent?: boolean } = {},
  ): Promise<CacheMeta | undefined> {
    const { Item } = await this.db.send(
      new GetItemCommand({
        TableName: this.table,
        Key: keyOf(pk, SortKey.Meta),
        ConsistentRead: options.consistent ?? false,
      }),
    );
    return Item === undefined ? undefined : itemToMeta(Item);
  }

  readPage(pk: string): Promise<PageRows> {
    return readPageRows(this.db, this.table, pk);
  }

  markPass(input: MarkPassInput): Promise<void> {
    return writePassMark(this.db, this.table, input);
  }

  storeGone(input: StoreGoneInput): Promise<void> {
    return writeGonePage(this.db, this.table, input);
  }

  /**
   * Returns the lease it replaced, if any (`ReturnValues: ALL_OLD` costs nothing): an expired one,
   * or with `seize`, whichever was there.
   */
  async acquireLease(input: AcquireLeaseInput): Promise<AcquiredLease> {
    const lease: Lease = {
      pk: input.pk,
      token: randomUUID(),
      expiresAt: input.now + input.durationSeconds,
      owner: input.owner,
    };
    const condition =
      input.seize === true
        ? {}
        : {
            ConditionExpression: Guard.leaseFree,
            ExpressionAttributeNames: namesOf(Guard.leaseFree),
            ExpressionAttributeValues: { ':now': { N: String(input.now) } },
          };
    try {
      const { Attributes } = await this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: leaseToItem(lease, lockTtlOf(lease.expiresAt, this.#lockTtlBuffer)),
          ...condition,
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return Attributes === undefined ? lease : { ...lease, takenOver: itemToHolder(Attributes) };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new LeaseHeldError(input.pk, itemToHolder(error.Item));
      }
      throw error;
    }
  }

  /**
   * Conditioned on the token alone: any takeover replaces the token atomically, so a caller whose
   * token is still on the row is still the only writer, even if its time ran out meanwhile.
   */
  async refreshLease(
    lease: Lease,
    input: { now: number; durationSeconds: number },
  ): Promise<Lease> {
    const expiresAt = input.now + input.durationSeconds;
    const update = 'SET #lease_expires_at = :expires_at, #status_at = :expires_at, #ttl = :ttl';
    const held = leaseHeld(lease, { update });
    try {
      await this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(lease.pk, SortKey.Lock),
          UpdateExpression: update,
          ...held,
          ExpressionAttributeValues: {
            ':expires_at': { N: String(expiresAt) },
            ':ttl': { N: String(lockTtlOf(expiresAt, this.#lockTtlBuffer)) },
            ...held.ExpressionAttributeValues,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { ...lease, expiresAt };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new LeaseLostError(lease.pk, itemToHolder(error.Item), { cause: error });
      }
      throw error;
    }
  }

  async releaseLease(lease: Lease): Promise<boolean> {
    const released = await conditionalWrite(
      this.db.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: keyOf(lease.pk, SortKey.Lock),
          ...leaseHeld(lease),
        }),
      ),
    );
    return released !== undefined;
  }

  refreshGeneration(input: RefreshInput): Promise<void> {
    return refreshGeneration(this.db, this.table, input);
  }

  async recordFailure(input: RecordFailureInput): Promise<boolean> {
    // A failing page joins the status index (FAILING, then BROKEN), so the sweeper and `isr
    // failed` find it from its first failure; a publish's Put takes it out.
    const update =
      'SET #regen_failures = :count, #regen_failed_at = :failed_at, #regen_next_at = :next_at, #regen_error = :error' +
      (input.ttl === undefined ? '' : ', #ttl = :ttl') +
      ', #status_shard = :shard, #status_at = :failed_at';
    const condition = allOf(Guard.sameGeneration, Guard.failureCountUnchanged);
    const written = await conditionalWrite(
      this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(input.pk, SortKey.Meta),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: namesOf(update, condition),
          ExpressionAttributeValues: {
            ':count': { N: String(input.record.count) },
            ':failed_at': { N: String(input.record.lastFailedAt) },
            ':next_at': { N: String(input.record.nextAttemptAt) },
            ':error': { S: input.record.error },
            ...(input.ttl === undefined ? {} : { ':ttl': { N: String(input.ttl) } }),
            ':generated_at': { N: String(input.observedGeneratedAt) },
            ':previous': { N: String(input.previousCount) },
            ':shard': {
              S: statusShardOf(
                input.broken ? IndexedStatus.Broken : IndexedStatus.Failing,
                input.pk,
              ),
            },
          },
        }),
      ),
    );
    return written !== undefined;
  }

  async clearRevalidationMark(lease: Lease): Promise<boolean> {
    const update = 'REMOVE #revalidated_by';
    const cleared = await conditionalWrite(
      this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(lease.pk, SortKey.Lock),
          UpdateExpression: update,
          ...leaseHeld(lease, { update }),
        }),
      ),
    );
    return cleared !== undefined;
  }

  /**
   * One TransactWriteItems: Put META (never over a newer generation), Delete LOCK conditioned on
   * this caller's token and unexpired, unmarked lease, and, with a seal, REQ# -> COMPLETED unless another
   * delivery completed it first; and with a version (Recipe B), Put VER# (never over another
   * row). The condition sits on the Delete itself: DynamoDB rejects a ConditionCheck and a
   * Delete on the same item.
   */
  async publishGeneration(input: PublishInput): Promise<void> {
    const { lease, meta, now, seal } = input;
    assertUnderLease('META', meta.pk, lease);
    const mark = markCondition(input.observed);
    const metaCondition = allOf(Guard.notNewerGeneration, mark.condition);
    const actions: PublishAction[] = [PublishAction.PutMeta, PublishAction.DeleteLock];
    const items: TransactWriteItem[] = [
      {
        Put: {
          TableName: this.table,
          Item: metaToItem(meta),
          ConditionExpression: metaCondition,
          ExpressionAttributeNames: namesOf(metaCondition),
          ExpressionAttributeValues: {
            ':generated_at': { N: String(meta.generatedAt) },
            ...mark.values,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      leasedLockDelete(this.table, lease, { now, unmarked: true }),
    ];
    if (seal !== undefined) {
      const update = sealUpdate({
        s3Key: meta.s3Key,
        generatedAt: meta.generatedAt,
        ttl: seal.ttl,
        now,
      });
      actions.push(PublishAction.SealRequest);
      items.push({
        Update: {
          TableName: this.table,
          Key: requestKey(lease.pk, seal.idempotencyKey),
          ...update,
          ConditionExpression: Guard.requestOpen,
          ExpressionAttributeNames: namesOf(update.UpdateExpression, Guard.requestOpen),
          ExpressionAttributeValues: {
            ...update.ExpressionAttributeValues,
            ':started': { S: RequestStatus.Started },
          },
        },
      });
    }
    if (meta.currentSk !== undefined) {
      actions.push(PublishAction.PutVersion);
      items.push({
        Put: {
          TableName: this.table,
          Item: versionToItem({ ...meta, currentSk: meta.currentSk }),
          ConditionExpression: Guard.rowAbsent,
          ExpressionAttributeNames: namesOf(Guard.rowAbsent),
        },
      });
    }
    try {
      await this.db.send(new TransactWriteItemsCommand({ TransactItems: items }));
    } catch (error) {
      throw (
        classifyPublishFailure(error, lease, actions, {
          meta,
          observed: input.observed,
          idempotencyKey: seal?.idempotencyKey,
        }) ?? error
      );
    }
  }
}

/** The META condition that keeps the revalidation mark the render read (`Guard.sameMark`). */
function markCondition(observed: CacheMeta | undefined): {
  readonly condition: string;
  readonly values: Record<string, { S: string }>;
} {
  if (observed === undefined) return { condition: Guard.noMarkSinceAbsent, values: {} };
  if (observed.revalidatedBy === undefined) return { condition: Guard.stillUnmarked, values: {} };
  return { condition: Guard.sameMark, values: { ':seen_mark': { S: observed.revalidatedBy } } };
}
