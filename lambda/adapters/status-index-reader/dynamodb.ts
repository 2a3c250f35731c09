import { QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { StatusIndexReader, StatusRow } from '../../core/operate/ports.js';
import { StatusIndex } from '../../core/page/rows.js';
import { num, str, type Item } from '../shared/dynamodb/items.js';

export interface DynamoStatusIndexReaderOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/**
 * The status index on DynamoDB: one Query per shard, `Limit` rows, oldest `status_at` first. A
 * GSI is read eventually consistent only; a row a second old may be missing, or gone already,
 * which a report every five minutes tolerates.
 */
export class DynamoStatusIndexReader implements StatusIndexReader {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: DynamoStatusIndexReaderOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async readShard(shard: string, limit: number) {
    const { Items, LastEvaluatedKey } = await this.#client.send(
      new QueryCommand({
        TableName: this.#tableName,
        IndexName: StatusIndex.Name,
        KeyConditionExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': StatusIndex.PartitionKey },
        ExpressionAttributeValues: { ':shard': { S: shard } },
        ScanIndexForward: true,
        Limit: limit,
      }),
    );
    return { rows: (Items ?? []).map(statusRowOf), truncated: LastEvaluatedKey !== undefined };
  }
}

/** REQ# rows name their holder `locked_by`, LOCK rows `lease_owner`; broken META `regen_error`. */
const statusRowOf = (item: Item): StatusRow => ({
  pk: str(item, 'pk') ?? '',
  sk: str(item, 'sk') ?? '',
  at: num(item, StatusIndex.SortKey) ?? 0,
  owner: str(item, 'locked_by') ?? str(item, 'lease_owner'),
  errorCode: str(item, 'error_code'),
  error: str(item, 'error') ?? str(item, 'regen_error'),
  cacheKey: str(item, 'cache_key') ?? requestedKey(item),
  createdAt: num(item, 'created_at'),
});

/** A REQ# row keeps the intent it claimed (`request`, JSON with `cacheKey`). */
function requestedKey(item: Item): string | undefined {
  const request = str(item, 'request');
  if (request === undefined) return undefined;
  try {
    const parsed = JSON.parse(request) as { cacheKey?: unknown };
    return typeof parsed.cacheKey === 'string' ? parsed.cacheKey : undefined;
  } catch {
    return undefined;
  }
}
