import { CloudFrontClient, CreateInvalidationCommand } from '@aws-sdk/client-cloudfront';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import {
  DynamoPendingPurges,
  PENDING_PURGES_PK,
  pendingPurgeSortKey,
  refusedPurgeSortKey,
} from '../../../../lambda/adapters/pending-purges/dynamodb.js';
import type { PendingPurge } from '../../../../lambda/core/operate/ports.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { pendingPurgeFlusher } from '../../../../lambda/shared/cdn.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';

let clients: AwsClients;

beforeAll(() => {
  clients = testClients();
});
afterAll(() => clients.dynamodb.destroy());

/** Each test gets its own table: the pending partition is one per table. */
async function freshStore() {
  const tableName = await createTestTable(clients);
  return { store: new DynamoPendingPurges({ client: clients.dynamodb, tableName }), tableName };
}

const purge = (id: string, recordedAt: number, tags = [`t/${id}`]): PendingPurge => ({
  id,
  tags,
  reason: 'TooManyInvalidationsInProgress: too many',
  recordedAt,
  attempts: 3,
});

const rowOf = async (tableName: string, entry: PendingPurge) =>
  (
    await clients.dynamodb.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: PENDING_PURGES_PK }, sk: { S: pendingPurgeSortKey(entry) } },
        ConsistentRead: true,
      }),
    )
  ).Item;

describe('DynamoPendingPurges', () => {
  it('returns pending purges oldest first, whatever order they were recorded in', async () => {
    const { store } = await freshStore();
    const later = purge('b', 1_800_000_002_000, ['_/b', 't1/key:0123']);
    const earlier = purge('a', 999);
    await store.add(later);
    await store.add(earlier);
    await store.add(purge('c', 1_800_000_001_000));

    expect((await store.oldest(10)).map((entry) => entry.id)).toEqual(['a', 'c', 'b']);
    expect(await store.oldest(1)).toEqual([earlier]);
    expect((await store.oldest(10))[2]).toEqual(later);
  });

  it('keys the row by time then id, with a ttl for garbage collection only', async () => {
    const { store, tableName } = await freshStore();
    const entry = purge('a', 1_800_000_000_500);
    await store.add(entry);
    const row = await rowOf(tableName, entry);
    expect(row?.sk?.S).toBe('1800000000500#a');
    expect(Number(row?.ttl?.N)).toBe(1_800_000_000 + 7 * 24 * 3600);
  });

  it('records an attempt on the row, and never recreates a removed one', async () => {
    const { store, tableName } = await freshStore();
    const entry = purge('a', 1000);
    await store.add(entry);
    await store.recordAttempt(entry, { reason: 'still busy', at: 5000 });
    expect(await store.oldest(1)).toEqual([{ ...entry, attempts: 4, reason: 'still busy' }]);

    await store.remove(entry);
    await store.recordAttempt(entry, { reason: 'late sweeper', at: 6000 });
    expect(await store.oldest(10)).toEqual([]);
    expect(await rowOf(tableName, entry)).toBeUndefined();
  });

  it('sets a refused purge aside in the same partition, out of the pending list, with its reason', async () => {
    const { store, tableName } = await freshStore();
    const refused = purge('a', 1000);
    await store.add(refused);
    await store.add(purge('b', 2000));
    await store.refuse(refused, { reason: 'InvalidArgument: bad tag', at: 7000 });
    expect((await store.oldest(10)).map((row) => row.id)).toEqual(['b']);
    expect(await rowOf(tableName, refused)).toBeUndefined();
    const { Item } = await clients.dynamodb.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: PENDING_PURGES_PK }, sk: { S: refusedPurgeSortKey(refused) } },
        ConsistentRead: true,
      }),
    );
    expect(Item).toMatchObject({
      purge_id: { S: 'a' },
      reason: { S: 'InvalidArgument: bad tag' },
      refused_at: { N: '7000' },
    });
  });

  it('keeps the first record of a purge added twice (a retried call)', async () => {
    const { store } = await freshStore();
    const entry = purge('a', 1000);
    await store.add(entry);
    await store.recordAttempt(entry, { reason: 'still busy', at: 5000 });
    await store.add(entry);
    expect((await store.oldest(10)).map((row) => row.attempts)).toEqual([4]);
  });

  it('negative control: without the row-absent guard a repeated add resets the attempts', async () => {
    const { store } = await freshStore();
    const entry = purge('a', 1000);
    await store.add(entry);
    await store.recordAttempt(entry, { reason: 'still busy', at: 5000 });
    const restore = removeGuard(clients.dynamodb, Guard.rowAbsent);
    try {
      await store.add(entry);
    } finally {
      restore();
    }
    expect((await store.oldest(10)).map((row) => row.attempts)).toEqual([3]);
  });

  it('negative control: without the row-exists guard a late attempt brings a removed row back', async () => {
    const { store, tableName } = await freshStore();
    const entry = purge('a', 1000);
    await store.add(entry);
    await store.remove(entry);
    const restore = removeGuard(clients.dynamodb, Guard.rowExists);
    try {
      await store.recordAttempt(entry, { reason: 'late sweeper', at: 6000 });
    } finally {
      restore();
    }
    expect(await rowOf(tableName, entry)).toBeDefined();
  });
});

describe("the sweeper's flush of pending purges (shared/cdn.ts)", () => {
  // No local CloudFront exists: its client is mocked, the pending rows are real.
  const cloudfrontClient = new CloudFrontClient({ region: 'us-east-1' });
  const cloudfront = mockClient(cloudfrontClient);
  afterAll(() => cloudfront.restore());

  const flusherFor = (tableName: string, distributionId: string | undefined) =>
    pendingPurgeFlusher({
      distributionId,
      dynamodb: clients.dynamodb,
      tableName,
      cloudfront: cloudfrontClient,
      clock: new TestClock(),
    });

  it('submits a stored purge under its identity and removes its row once CloudFront accepts it', async () => {
    const { store, tableName } = await freshStore();
    const entry = purge('p-flush', 1_800_000_000_000, ['_/post:42']);
    await store.add(entry);
    cloudfront
      .on(CreateInvalidationCommand)
      .resolves({ Invalidation: { Id: 'I-FLUSHED' } } as never);

    await expect(flusherFor(tableName, 'E2FLUSH')?.()).resolves.toBe(1);

    const sent = cloudfront.commandCalls(CreateInvalidationCommand)[0]?.args[0].input;
    expect(sent?.DistributionId).toBe('E2FLUSH');
    expect(sent?.InvalidationBatch?.Paths?.Items).toEqual(['#_/post:42']);
    expect(await rowOf(tableName, entry)).toBeUndefined();
  });

  it('is not built when no distribution is configured: nothing to submit', () => {
    expect(flusherFor('any', undefined)).toBeUndefined();
  });
});
