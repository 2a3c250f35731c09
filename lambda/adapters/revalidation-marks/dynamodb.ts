import { DeleteItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { CacheMeta } from '../../core/page/model.js';
import type { RevalidationMarks } from '../../core/revalidate/ports.js';
import { SortKey } from '../../core/page/rows.js';
import { conditionalWrite, conflictAware } from '../shared/dynamodb/conditional-write.js';
import { Guard, namesOf } from '../shared/dynamodb/conditions.js';
import { itemToMeta, keyOf } from '../shared/dynamodb/items.js';
import { DynamoTableAdapter } from '../shared/dynamodb/table.js';

/**
 * A revalidation's writes on a page's rows. Each is conditioned on the row existing, so a
 * revalidation never creates a LOCK or a META (a META without `s3_key` would break Recipe A
 * readers). A write that meets a publish's ongoing transaction on its row throws
 * TransactionConflictError (`conflictAware`), for the caller to retry.
 */
export class DynamoRevalidationMarks extends DynamoTableAdapter implements RevalidationMarks {
  async markLock(pk: string, effectId: string): Promise<boolean> {
    const update = 'SET #revalidated_by = :effect';
    const marked = await conditionalWrite(
      conflictAware(
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: keyOf(pk, SortKey.Lock),
            UpdateExpression: update,
            ConditionExpression: Guard.rowExists,
            ExpressionAttributeNames: namesOf(update, Guard.rowExists),
            ExpressionAttributeValues: { ':effect': { S: effectId } },
          }),
        ),
        pk,
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
      conflictAware(
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
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
        pk,
      ),
    );
    return marked?.Attributes === undefined ? undefined : itemToMeta(marked.Attributes);
  }

  async expire(pk: string): Promise<CacheMeta | undefined> {
    const expired = await conditionalWrite(
      conflictAware(
        this.db.send(
          new DeleteItemCommand({
            TableName: this.table,
            Key: keyOf(pk, SortKey.Meta),
            ConditionExpression: Guard.rowExists,
            ExpressionAttributeNames: namesOf(Guard.rowExists),
            ReturnValues: 'ALL_OLD',
          }),
        ),
        pk,
      ),
    );
    return expired?.Attributes === undefined ? undefined : itemToMeta(expired.Attributes);
  }

  /** Two DeleteItems side by side (1 WCU each, found or not): META#PASS and META#GONE. */
  async clearPass(pk: string): Promise<boolean> {
    const clear = (sk: string) =>
      conflictAware(
        this.db.send(
          new DeleteItemCommand({
            TableName: this.table,
            Key: keyOf(pk, sk),
            ReturnValues: 'ALL_OLD',
          }),
        ),
        pk,
      );
    const cleared = await Promise.all([clear(SortKey.Pass), clear(SortKey.Gone)]);
    return cleared.some((deleted) => deleted.Attributes !== undefined);
  }
}
