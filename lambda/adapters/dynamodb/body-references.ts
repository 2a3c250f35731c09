import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { BodyReferences, PageReferences } from '../../core/ports.js';
import { SortKey, VERSION_PREFIX } from '../../core/rows.js';
import { queryAll } from './query-all.js';
import { num, str, type Item } from './items.js';

export interface DynamoBodyReferencesOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/**
 * What points to a page's bodies, in two strongly consistent Queries: LOCK and META (`sk`
 * between `LOCK` and `META` holds exactly those two), then every VER# row. REQ# rows are never
 * read: a page regenerated often has many.
 */
export class DynamoBodyReferences implements BodyReferences {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: DynamoBodyReferencesOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async of(pk: string): Promise<PageReferences> {
    const [head, versions] = await Promise.all([
      this.#query(pk, '#sk BETWEEN :lock AND :meta', {
        ':lock': { S: SortKey.Lock },
        ':meta': { S: SortKey.Meta },
      }),
      this.#query(pk, 'begins_with(#sk, :prefix)', { ':prefix': { S: VERSION_PREFIX } }),
    ]);
    const lock = head.find((item) => str(item, 'sk') === SortKey.Lock);
    const s3Keys = new Set<string>();
    for (const item of [...head, ...versions]) {
      const key = str(item, 's3_key');
      if (key !== undefined) s3Keys.add(key);
    }
    return {
      s3Keys,
      lease:
        lock === undefined
          ? undefined
          : { token: str(lock, 'lease_token'), expiresAt: num(lock, 'lease_expires_at') ?? 0 },
    };
  }

  #query(pk: string, sortCondition: string, values: Item): Promise<Item[]> {
    return queryAll(this.#client, {
      TableName: this.#tableName,
      KeyConditionExpression: `#pk = :pk AND ${sortCondition}`,
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':pk': { S: pk }, ...values },
      ConsistentRead: true,
    });
  }
}
