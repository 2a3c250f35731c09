import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import {
  BUDGET_ROW_TTL_SECONDS,
  budgetPk,
  budgetSk,
  DEFERRED_PK,
  DEFERRED_TTL_SECONDS,
  deferredPrefixOf,
  windowEndOf,
  type DeferredIntent,
  type RegenerationBudget,
} from '../../core/page/budget.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { namesOf } from '../shared/dynamodb/conditions.js';
import { keyOf, num, str, type Item } from '../shared/dynamodb/items.js';
import { DynamoTableAdapter } from '../shared/dynamodb/table.js';

const n = (value: number) => ({ N: String(value) });

/** Counts below the cap only: the count never passes it, however many workers race. */
const BELOW_CAP = 'attribute_not_exists(#regenerations) OR #regenerations < :cap';
/** A stale hit's intent never replaces a revalidation's, which may carry a soft purge. */
const NOT_EXPLICIT = 'attribute_not_exists(#pk) OR #explicit = :false';
/** A release deletes the row it read, not one deferred again since. */
const SAME_DEFERRAL = '#deferred_at = :at';

/**
 * The budget in the cache table: a counter row per scope and minute (`ISR#BUDGET…`, `MINUTE#n`)
 * counted by one conditional `ADD`, and a deferred row per page under `ISR#DEFERRED`. The `ADD`
 * is 1 WCU: its row is under 1 KB, and a refused conditional write is billed the same
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).
 * FaceTheory readers never read `ISR#` rows.
 */
export class DynamoRegenerationBudget extends DynamoTableAdapter implements RegenerationBudget {
  async take(scope: string, window: number, cap: number): Promise<boolean> {
    const update = 'ADD #regenerations :one SET #ttl = :ttl';
    const written = await conditionalWrite(
      this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: keyOf(budgetPk(scope), budgetSk(window)),
          UpdateExpression: update,
          ConditionExpression: BELOW_CAP,
          ExpressionAttributeNames: namesOf(update, BELOW_CAP),
          ExpressionAttributeValues: {
            ':one': n(1),
            ':cap': n(cap),
            ':ttl': n(windowEndOf(window) + BUDGET_ROW_TTL_SECONDS),
          },
        }),
      ),
    );
    return written !== undefined;
  }

  /** Eventually consistent (0.5 RCU): a count read a moment late only delays a catch-up. */
  async count(scope: string, window: number): Promise<number> {
    const { Item } = await this.db.send(
      new GetItemCommand({
        TableName: this.table,
        Key: keyOf(budgetPk(scope), budgetSk(window)),
        ProjectionExpression: '#regenerations',
        ExpressionAttributeNames: { '#regenerations': 'regenerations' },
      }),
    );
    return (Item && num(Item, 'regenerations')) ?? 0;
  }

  async defer(entry: DeferredIntent): Promise<void> {
    const condition = entry.explicit ? undefined : NOT_EXPLICIT;
    await conditionalWrite(
      this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: {
            ...keyOf(DEFERRED_PK, entry.pk),
            scope: { S: entry.scope },
            intent: { S: entry.body },
            explicit: { BOOL: entry.explicit },
            deferred_at: n(entry.deferredAt),
            ttl: n(entry.deferredAt + DEFERRED_TTL_SECONDS),
          },
          ...(condition === undefined
            ? {}
            : {
                ConditionExpression: condition,
                ExpressionAttributeNames: namesOf(condition),
                ExpressionAttributeValues: { ':false': { BOOL: false } },
              }),
        }),
      ),
    );
  }

  async deferred(limit: number, scope?: string): Promise<readonly DeferredIntent[]> {
    const key = scope === undefined ? '#pk = :pk' : '#pk = :pk AND begins_with(#sk, :prefix)';
    const { Items } = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: key,
        ExpressionAttributeNames: namesOf(key),
        ExpressionAttributeValues: {
          ':pk': { S: DEFERRED_PK },
          ...(scope === undefined ? {} : { ':prefix': { S: deferredPrefixOf(scope) } }),
        },
        Limit: limit,
      }),
    );
    return (Items ?? []).map(deferredOfItem);
  }

  async release(entry: DeferredIntent): Promise<void> {
    await conditionalWrite(
      this.db.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: keyOf(DEFERRED_PK, entry.pk),
          ConditionExpression: SAME_DEFERRAL,
          ExpressionAttributeNames: namesOf(SAME_DEFERRAL),
          ExpressionAttributeValues: { ':at': n(entry.deferredAt) },
        }),
      ),
    );
  }
}

const deferredOfItem = (item: Item): DeferredIntent => ({
  pk: str(item, 'sk') ?? '',
  scope: str(item, 'scope') ?? '',
  body: str(item, 'intent') ?? '',
  explicit: item.explicit?.BOOL === true,
  deferredAt: num(item, 'deferred_at') ?? 0,
});
