import {
  DeleteItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { CacheMeta } from '../../core/page/model.js';
import type { RevalidationMarks } from '../../core/revalidate/ports.js';
import { SortKey } from '../../core/page/rows.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { Guard, namesOf } from '../shared/dynamodb/conditions.js';
import { itemToMeta, keyOf } from '../shared/dynamodb/items.js';

/**
 * A revalidation's writes on a page's rows. Each is conditioned on the row existing, so a
 * revalidation never creates a LOCK or a META (a META without `s3_key` would break Recipe A
 * readers).
 */
export class DynamoRevalidationMarks implements RevalidationMarks {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: { client: DynamoDBClient; tableName: string }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async markLock(pk: string, effectId: string): Promise<boolean> {
    const update = 'SET #revalidated_by = :effect';
    const marked = await conditionalWrite(
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: keyOf(pk, SortKey.Lock),
          UpdateExpression: update,
          ConditionExpression: Guard.rowExists,
          ExpressionAttributeNames: namesOf(update, Guard.rowExists),
          ExpressionAttributeValues: { ':effect': { S: effectId } },
        }),
      ),
    );
    return marked !== undefined;
  }

  async markStale(
    pk: string,
    input: { effectId: string; now: number },
  ): Promise<CacheMeta | undefined> {
    const update =
      'SET #revalidate_seconds = :zero, #revalidated_at = :now, #revalidated_by = :effect ' +
      'REMOVE #regen_failures, #regen_failed_at, #regen_next_at, #regen_error, #status_shard, #status_at';
    const marked = await conditionalWrite(
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: keyOf(pk, SortKey.Meta),
          UpdateExpression: update,
          ConditionExpression: Guard.rowExists,
          ExpressionAttributeNames: namesOf(update, Guard.rowExists),
          ExpressionAttributeValues: {
            ':zero': { N: '0' },
            ':now': { N: String(input.now) },
            ':effect': { S: input.effectId },
          },
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    return marked?.Attributes === undefined ? undefined : itemToMeta(marked.Attributes);
  }

  async expire(pk: string): Promise<CacheMeta | undefined> {
    const expired = await conditionalWrite(
      this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: keyOf(pk, SortKey.Meta),
          ConditionExpression: Guard.rowExists,
          ExpressionAttributeNames: namesOf(Guard.rowExists),
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    return expired?.Attributes === undefined ? undefined : itemToMeta(expired.Attributes);
  }

  async clearPass(pk: string): Promise<boolean> {
    const cleared = await this.#client.send(
      new DeleteItemCommand({
        TableName: this.#tableName,
        Key: keyOf(pk, SortKey.Pass),
        ReturnValues: 'ALL_OLD',
      }),
    );
    return cleared.Attributes !== undefined;
  }
}
