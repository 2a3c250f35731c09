/** The status row on DynamoDB Local (its contract is in `contract.ts`): keyed by effect, with a ttl. */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DynamoRevalidationStatuses,
  revalidationStatusPartition,
  STATUS_SK,
} from '../../../../lambda/adapters/revalidation-statuses/dynamodb.js';
import type { RevalidationStatus } from '../../../../lambda/core/revalidate/ports.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { TransactionConflictError } from '../../../../lambda/core/errors.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { TransactionConflicts } from '../../../helpers/dynamodb-conflicts.js';

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

  // DynamoDB Local does not show it (it serialises transactions): AWS's rule through the stand-in.
  it('says a conflict when a fan-out step’s transaction holds the row (transaction-apis.html)', async () => {
    const conflicted = testClients();
    const rule = new TransactionConflicts();
    rule.attach(conflicted.dynamodb);
    const store = new DynamoRevalidationStatuses({ client: conflicted.dynamodb, tableName });
    const id = `rv_${'d'.repeat(32)}`;
    await store.put({ ...status, effectId: id, state: 'marking' });
    const key = { pk: { S: revalidationStatusPartition(id) }, sk: { S: STATUS_SK } };
    const end = rule.begin('TransactWriteItemsCommand', {
      TransactItems: [{ Update: { TableName: tableName, Key: key } }],
    });
    await expect(store.expect(id, { count: 2, exact: true })).rejects.toBeInstanceOf(
      TransactionConflictError,
    );
    end();
    await store.expect(id, { count: 2, exact: true });
    expect(await store.get(id)).toMatchObject({ expected: { count: 2, exact: true } });
    conflicted.dynamodb.destroy();
  });
});
