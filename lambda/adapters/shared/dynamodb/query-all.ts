import {
  QueryCommand,
  type DynamoDBClient,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { Item } from './items.js';

/** Every item a Query matches, page after page (a partition's rows are few, so all are read). */
export async function queryAll(
  client: DynamoDBClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}
