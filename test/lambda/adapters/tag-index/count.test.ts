import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { keyOf } from '../../../../lambda/adapters/shared/dynamodb/items.js';
import {
  countTagPages,
  PAGE,
  tagPartition,
} from '../../../../lambda/adapters/tag-index/dynamodb.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';

/**
 * The count a revalidation's 202 reports, on DynamoDB Local: one Query of `limit + 1` keys,
 * exact up to the limit, estimated past it from where the last key read falls in the hash space.
 */
let clients: AwsClients;
let tableName: string;
const PAGES = 4_000;

beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
  const policy = { allowedQueryParams: [] };
  const rows = Array.from({ length: PAGES }, (_, i) =>
    keyOf(
      tagPartition(undefined, 'big'),
      `${PAGE}${normaliseCacheKey({ rawPath: `/p/${i}` }, policy).pk}`,
    ),
  );
  const batches = Array.from({ length: PAGES / 25 }, (_, i) => rows.slice(i * 25, i * 25 + 25));
  for (let i = 0; i < batches.length; i += 8) {
    await Promise.all(
      batches.slice(i, i + 8).map((batch) =>
        clients.dynamodb.send(
          new BatchWriteItemCommand({
            RequestItems: { [tableName]: batch.map((Item) => ({ PutRequest: { Item } })) },
          }),
        ),
      ),
    );
  }
}, 60_000);
afterAll(() => clients.dynamodb.destroy());

const count = (limit: number) =>
  countTagPages(clients.dynamodb, tableName, { tenant: undefined, tag: 'big', limit });

describe('countTagPages on DynamoDB Local', () => {
  it('counts exactly up to the limit', async () => {
    expect(await count(PAGES)).toEqual({ count: PAGES, exact: true });
    expect(await count(10_000)).toEqual({ count: PAGES, exact: true });
  });

  it('past the limit, estimates from a thousand keys within 10% of the truth', async () => {
    const estimate = await count(1_000);
    expect(estimate.exact).toBe(false);
    expect(Math.abs(estimate.count - PAGES) / PAGES).toBeLessThan(0.1);
  });

  it('never answers less than the limit past it', async () => {
    const estimate = await count(PAGES - 1);
    expect(estimate).toMatchObject({ exact: false });
    expect(estimate.count).toBeGreaterThanOrEqual(PAGES - 1);
  });
});
