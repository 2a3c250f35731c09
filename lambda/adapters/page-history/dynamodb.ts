/**
 * A page's versions (seed 001, Recipe B) and the operator's writes on them, on DynamoDB. The
 * VER# rows themselves are written by the publish transaction (`cache-table.ts`).
 */
import {
  GetItemCommand,
  QueryCommand,
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
import type { PageVersion } from '../../core/page/model.js';
import { SortKey, VERSION_PREFIX, versionIdOf } from '../../core/page/rows.js';
import { TRANSIENT_CODES } from '../shared/dynamodb/cancellation.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { Guard, allOf, namesOf } from '../shared/dynamodb/conditions.js';
import {
  itemToHolder,
  itemToVersion,
  keyOf,
  metaToItem,
  type Item,
} from '../shared/dynamodb/items.js';
import { DynamoVersionRows } from '../version-rows/dynamodb.js';

/** The operator's side of a page's history: read its versions, restore one, hold, release. */
export class DynamoPageHistory extends DynamoVersionRows implements PageHistory {
  async versions(pk: string): Promise<PageVersion[]> {
    const versions: PageVersion[] = [];
    let start: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
          ExpressionAttributeValues: { ':pk': { S: pk }, ':prefix': { S: VERSION_PREFIX } },
          ScanIndexForward: false,
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      versions.push(...(page.Items ?? []).map(itemToVersion));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return versions;
  }

  async version(pk: string, sk: string): Promise<PageVersion | undefined> {
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: keyOf(pk, sk), ConsistentRead: true }),
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
    const lockCondition = allOf(Guard.leaseToken, Guard.leaseLive);
    const items: TransactWriteItem[] = [
      {
        Put: {
          TableName: this.tableName,
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
      {
        Delete: {
          TableName: this.tableName,
          Key: keyOf(lease.pk, SortKey.Lock),
          ConditionExpression: lockCondition,
          ExpressionAttributeNames: namesOf(lockCondition),
          ExpressionAttributeValues: { ':token': { S: lease.token }, ':now': { N: String(now) } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ];
    if (meta.currentSk !== undefined) {
      items.push({
        ConditionCheck: {
          TableName: this.tableName,
          Key: keyOf(meta.pk, meta.currentSk),
          ConditionExpression: Guard.rowExists,
          ExpressionAttributeNames: namesOf(Guard.rowExists),
        },
      });
    }
    try {
      await this.client.send(new TransactWriteItemsCommand({ TransactItems: items }));
    } catch (error) {
      throw classifyRestoreFailure(error, meta.pk, meta.currentSk) ?? error;
    }
  }

  /**
   * One transaction: Update META's `hold_until` and `ttl` alone, conditioned on the generation
   * the operator read (a revalidation's mark, written meanwhile, is left as it is); Delete LOCK,
   * conditioned on the operator's (seized) lease.
   */
  async hold(input: HoldWrite): Promise<void> {
    const { lease, now } = input;
    const update = 'SET #hold_until = :hold_until, #ttl = :ttl';
    const unchanged = allOf(Guard.rowExists, Guard.sameGeneration);
    const lockCondition = allOf(Guard.leaseToken, Guard.leaseLive);
    try {
      await this.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: keyOf(lease.pk, SortKey.Meta),
                UpdateExpression: update,
                ConditionExpression: unchanged,
                ExpressionAttributeNames: namesOf(update, unchanged),
                ExpressionAttributeValues: {
                  ':hold_until': { N: String(input.holdUntil) },
                  ':ttl': { N: String(input.ttl) },
                  ':generated_at': { N: String(input.expectedGeneratedAt) },
                },
              },
            },
            {
              Delete: {
                TableName: this.tableName,
                Key: keyOf(lease.pk, SortKey.Lock),
                ConditionExpression: lockCondition,
                ExpressionAttributeNames: namesOf(lockCondition),
                ExpressionAttributeValues: {
                  ':token': { S: lease.token },
                  ':now': { N: String(now) },
                },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        }),
      );
    } catch (error) {
      throw classifyRestoreFailure(error, lease.pk, undefined) ?? error;
    }
  }

  async release(pk: string): Promise<boolean> {
    const update = 'REMOVE #hold_until';
    const condition = '(attribute_exists(#hold_until))';
    const released = await conditionalWrite(
      this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(pk, SortKey.Meta),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: namesOf(update, condition),
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
