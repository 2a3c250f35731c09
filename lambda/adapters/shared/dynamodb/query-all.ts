import {
  QueryCommand,
  type DynamoDBClient,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { Item } from './items.js';

/**
 * Every item a Query matches, page after page (a partition's rows are few, so all are read), or
 * the pages until at least `atLeast` items are read.
 */
export async function queryAll(
  client: DynamoDBClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
  atLeast = Infinity,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined && items.length < atLeast);
  return items;
}
