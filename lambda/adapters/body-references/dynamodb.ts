import { TransactWriteItemsCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { BodyReferences, PageReferences } from '../../core/operate/ports.js';
import { SortKey, VERSION_PREFIX } from '../../core/page/rows.js';
import { Guard, namesOf } from '../shared/dynamodb/conditions.js';
import { queryAll } from '../shared/dynamodb/query-all.js';
import { itemToMeta, keyOf, num, str, type Item } from '../shared/dynamodb/items.js';

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
    const meta = head.find((item) => str(item, 'sk') === SortKey.Meta);
    const listed = new Set(meta === undefined ? [] : (itemToMeta(meta).versionSks ?? []));
    const s3Keys = new Set<string>();
    const metaKey = meta === undefined ? undefined : str(meta, 's3_key');
    if (metaKey !== undefined) s3Keys.add(metaKey);
    const unlisted: { sk: string; s3Key: string | undefined; tags?: string[] }[] = [];
    for (const item of versions) {
      const sk = str(item, 'sk') ?? '';
      const s3Key = str(item, 's3_key');
      if (!listed.has(sk)) unlisted.push({ sk, s3Key, tags: item.tags?.SS });
      else if (s3Key !== undefined) s3Keys.add(s3Key);
    }
    return {
      s3Keys,
      unlisted,
      tags: meta === undefined ? undefined : (meta.tags?.SS ?? []),
      lease:
        lock === undefined
          ? undefined
          : { token: str(lock, 'lease_token'), expiresAt: num(lock, 'lease_expires_at') ?? 0 },
    };
  }

  /**
   * One TransactWriteItems per row: ConditionCheck that META does not list it, then Delete. A
   * cancellation (a publish listed the row, or touched META meanwhile) leaves the row for a later lap.
   */
  async forgetUnlisted(pk: string, sks: readonly string[]): Promise<string[]> {
    const forgotten: string[] = [];
    for (const sk of sks) {
      try {
        await this.#client.send(
          new TransactWriteItemsCommand({
            TransactItems: [
              {
                ConditionCheck: {
                  TableName: this.#tableName,
                  Key: keyOf(pk, SortKey.Meta),
                  ConditionExpression: Guard.versionUnlisted,
                  ExpressionAttributeNames: namesOf(Guard.versionUnlisted),
                  ExpressionAttributeValues: { ':sk': { S: sk } },
                },
              },
              { Delete: { TableName: this.#tableName, Key: keyOf(pk, sk) } },
            ],
          }),
        );
        forgotten.push(sk);
      } catch (error) {
        if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') throw error;
      }
    }
    return forgotten;
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
