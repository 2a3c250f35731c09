import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CacheKey } from '../../core/page/model.js';
import type { RenderCounter } from '../../core/regenerate/ports.js';
import { namesOf } from '../shared/dynamodb/conditions.js';
import { keyOf, num } from '../shared/dynamodb/items.js';

/** Sort key of the demo's per-page render counter, beside the page's META. */
export const RENDER_COUNT_SK = 'DEMO#RENDERS';

/** An atomic counter row per cache entry; it survives restarts like the cache itself. */
export class DynamoRenderCounter implements RenderCounter {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: { client: DynamoDBClient; tableName: string }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async increment(cacheKey: CacheKey): Promise<number> {
    const update = 'ADD #render_count :one';
    const { Attributes } = await this.#client.send(
      new UpdateItemCommand({
        TableName: this.#tableName,
        Key: keyOf(cacheKey.pk, RENDER_COUNT_SK),
        UpdateExpression: update,
        ExpressionAttributeNames: namesOf(update),
        ExpressionAttributeValues: { ':one': { N: '1' } },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return (Attributes && num(Attributes, 'render_count')) ?? 0;
  }
}
