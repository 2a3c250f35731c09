import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ResolveInput, StatusRow, WorkResolution } from '../../core/operate/ports.js';
import { SortKey } from '../../core/page/rows.js';
import { conditionalWrite } from '../shared/dynamodb/conditional-write.js';
import { allOf, Guard, namesOf } from '../shared/dynamodb/conditions.js';
import { keyOf, num } from '../shared/dynamodb/items.js';

/**
 * `WorkResolution` on DynamoDB: a GetItem of META's `generated_at`, and one conditional
 * UpdateItem per REQ# row resolved (1 write unit; only for rows in the status index, which are
 * rare: the cost follows failures, never publishes).
 */
export class DynamoWorkResolution implements WorkResolution {
  constructor(readonly options: { readonly client: DynamoDBClient; readonly tableName: string }) {}

  async publishedAt(pk: string): Promise<number | undefined> {
    const { Item } = await this.options.client.send(
      new GetItemCommand({
        TableName: this.options.tableName,
        Key: keyOf(pk, SortKey.Meta),
        ProjectionExpression: '#generated_at',
        ExpressionAttributeNames: { '#generated_at': 'generated_at' },
      }),
    );
    return Item === undefined ? undefined : num(Item, 'generated_at');
  }

  async resolve(row: StatusRow, input: ResolveInput): Promise<boolean> {
    const update =
      'SET #resolved_at = :now, #resolved_by_generation = :generation REMOVE #status_shard, #status_at';
    const condition = allOf(Guard.statusIs, Guard.statusAtUnchanged);
    const written = await conditionalWrite(
      this.options.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: keyOf(row.pk, row.sk),
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeNames: namesOf(update, condition),
          ExpressionAttributeValues: {
            ':now': { N: String(input.now) },
            ':generation': { N: String(input.generatedAt) },
            ':status': { S: input.status },
            ':status_at': { N: String(row.at) },
          },
        }),
      ),
    );
    return written !== undefined;
  }
}
