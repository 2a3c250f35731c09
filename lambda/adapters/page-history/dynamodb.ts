/**
 * A page's versions (seed 001, Recipe B) and the operator's writes on them, on DynamoDB. The
 * VER# rows themselves are written by the publish transaction (`cache-table.ts`).
 */
import {
  GetItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type CancellationReason,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import {
  LeaseLostError,
  PageChangedError,
  TransactionConflictError,
  VersionRequestError,
} from '../../core/errors.js';
import type { HoldWrite, PageHistory, RestoreInput } from '../../core/operate/ports.js';
import type { OperatorAct, PageVersion } from '../../core/page/model.js';
import { SortKey, VERSION_PREFIX, versionIdOf } from '../../core/page/rows.js';
import { TRANSIENT_CODES } from '../shared/dynamodb/cancellation.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { Guard, allOf, leasedLockDelete, namesOf } from '../shared/dynamodb/conditions.js';
import { itemToHolder, itemToVersion, keyOf, metaToItem } from '../shared/dynamodb/items.js';
import { queryAll } from '../shared/dynamodb/query-all.js';
import { DynamoVersionRows } from '../version-rows/dynamodb.js';

/** The operator's side of a page's history: read its versions, restore one, hold, release. */
export class DynamoPageHistory extends DynamoVersionRows implements PageHistory {
  async versions(pk: string): Promise<PageVersion[]> {
    const items = await queryAll(this.db, {
      TableName: this.table,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':pk': { S: pk }, ':prefix': { S: VERSION_PREFIX } },
      ScanIndexForward: false,
      ConsistentRead: true,
    });
    return items.map(itemToVersion);
  }

  async version(pk: string, sk: string): Promise<PageVersion | undefined> {
    const { Item } = await this.db.send(
      new GetItemCommand({ TableName: this.table, Key: keyOf(pk, sk), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : itemToVersion(Item);
  }

  /**
   * One transaction: Put META, conditioned on the generation and version the operator read;
   * Delete LOCK, conditioned on the operator's (seized) lease; and, when META names a version,
   * a check that its row is still there.
   */
  async restore(input: RestoreInput): Promise<void> {
    const { lease, meta, expected, now } = input;
    const unchanged = allOf(
      Guard.rowExists,
      Guard.sameGeneration,
      expected.currentSk === undefined ? Guard.noPointer : Guard.samePointer,
    );
    const items: TransactWriteItem[] = [
      {
        Put: {
          TableName: this.table,
          Item: metaToItem(meta),
          ConditionExpression: unchanged,
          ExpressionAttributeNames: namesOf(unchanged),
          ExpressionAttributeValues: {
            ':generated_at': { N: String(expected.generatedAt) },
            ...(expected.currentSk === undefined
              ? {}
              : { ':current_sk': { S: expected.currentSk } }),
          },
        },
      },
      leasedLockDelete(this.table, lease, { now }),
    ];
    if (meta.currentSk !== undefined) {
      items.push({
        ConditionCheck: {
          TableName: this.table,
          Key: keyOf(meta.pk, meta.currentSk),
          ConditionExpression: Guard.rowExists,
          ExpressionAttributeNames: namesOf(Guard.rowExists),
        },
      });
    }
    try {
      await this.db.send(new TransactWriteItemsCommand({ TransactItems: items }));
    } catch (error) {
      throw classifyRestoreFailure(error, meta.pk, meta.currentSk) ?? error;
    }
  }

  /**
   * One transaction: Update META's `hold_until`, `ttl` and hold record alone, conditioned on the
   * generation the operator read (a revalidation's mark, written meanwhile, is left as it is);
   * Delete LOCK, conditioned on the operator's (seized) lease.
   */
  async hold(input: HoldWrite): Promise<void> {
    const { lease, now } = input;
    const update =
      'SET #hold_until = :hold_until, #ttl = :ttl, #held_by = :by, #held_at = :now ' +
      'REMOVE #released_by, #released_at';
    const unchanged = allOf(Guard.rowExists, Guard.sameGeneration);
    try {
      await this.db.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.table,
                Key: keyOf(lease.pk, SortKey.Meta),
                UpdateExpression: update,
                ConditionExpression: unchanged,
                ExpressionAttributeNames: namesOf(update, unchanged),
                ExpressionAttributeValues: {
                  ':hold_until': { N: String(input.holdUntil) },
                  ':ttl': { N: String(input.ttl) },
                  ':by': { S: input.by },
                  ':now': { N: String(now) },
                  ':generated_at': { N: String(input.expectedGeneratedAt) },
                },
              },
            },
            leasedLockDelete(this.table, lease, { now }),
          ],
        }),
      );
    } catch (error) {
      throw classifyRestoreFailure(error, lease.pk, undefined) ?? error;
    }
  }

  async release(pk: string, act: OperatorAct): Promise<boolean> {
    const update = 'REMOVE #hold_until SET #released_by = :by, #released_at = :at';
    const released = await conditionalWrite(
      this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(pk, SortKey.Meta),
          UpdateExpression: update,
          ConditionExpression: Guard.held,
          ExpressionAttributeNames: namesOf(update, Guard.held),
          ExpressionAttributeValues: { ':by': { S: act.by }, ':at': { N: String(act.at) } },
        }),
      ),
    );
    return released !== undefined;
  }
}

/** Reads the cancellation reasons of a restore or a hold: [META, LOCK, VER#]. */
function classifyRestoreFailure(
  error: unknown,
  pk: string,
  versionSk: string | undefined,
): Error | undefined {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons: CancellationReason[] =
    (error as { CancellationReasons?: CancellationReason[] }).CancellationReasons ?? [];
  const failed = (index: number) => reasons[index]?.Code === 'ConditionalCheckFailed';
  if (failed(1)) return new LeaseLostError(pk, itemToHolder(reasons[1].Item), { cause: error });
  if (failed(0)) return new PageChangedError(pk, { cause: error });
  if (failed(2)) {
    const id = versionSk === undefined ? '' : versionIdOf(versionSk);
    return new VersionRequestError('version-not-kept', `version ${id} of ${pk} is gone`, {
      cause: error,
    });
  }
  if (reasons.some((reason) => TRANSIENT_CODES.has(reason.Code ?? ''))) {
    return new TransactionConflictError(`restore on ${pk} was cancelled transiently`, {
      cause: error,
    });
  }
  return undefined;
}
