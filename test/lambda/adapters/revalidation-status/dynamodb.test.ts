/** The status row on DynamoDB Local (its contract is in `contract.ts`): keyed by effect, with a ttl. */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DynamoRevalidationStatuses,
  revalidationStatusPartition,
  STATUS_SK,
} from '../../../../lambda/adapters/revalidation-status/dynamodb.js';
import type { RevalidationStatus } from '../../../../lambda/core/revalidate/ports.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';

let clients: AwsClients;
let tableName: string;
beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
});
afterAll(() => clients.dynamodb.destroy());

const status: RevalidationStatus = {
  effectId: `rv_${'c'.repeat(32)}`,
  tenant: undefined,
  mode: 'stale',
  regenerate: false,
  state: 'done',
  pages: 0,
  marked: 0,
  regenerations: 0,
  held: 0,
  heldPages: [],
  acceptedAtMs: 1_800_000_000_000,
};

describe('DynamoRevalidationStatuses', () => {
  it('keeps one row per effect, with a ttl a week after it was accepted', async () => {
    const store = new DynamoRevalidationStatuses({ client: clients.dynamodb, tableName });
    const id = status.effectId;
    await store.put(status);
    const { Item } = await clients.dynamodb.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: revalidationStatusPartition(id) }, sk: { S: STATUS_SK } },
        ConsistentRead: true,
      }),
    );
    expect(Item?.ttl?.N).toBe(String(1_800_000_000 + 7 * 24 * 3600));
  });
});
