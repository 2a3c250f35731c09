import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoCacheTable } from '../../../../lambda/adapters/cache-table/dynamodb.js';
import { RequestRowStore } from '../../../../lambda/adapters/request-store/dynamodb.js';
import { Settlement } from '../../../../lambda/core/idempotency.js';
import {
  IndexedStatus,
  StatusIndex,
  statusShardOf,
  type IndexedStatus as Status,
} from '../../../../lambda/core/page/rows.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createIdempotencyConfig } from '../../../../lambda/core/idempotency.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { TestClock } from '../../../helpers/clock.js';
import { fixedContext } from '../../../helpers/memory-service.js';

let clients: AwsClients;
let tableName: string;
let table: DynamoCacheTable;
let store: RequestRowStore;
const clock = new TestClock();
let n = 0;

beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
  table = new DynamoCacheTable({ client: clients.dynamodb, tableName });
  store = new RequestRowStore({ client: clients.dynamodb, tableName, clock });
  const config = createIdempotencyConfig(3_600);
  config.registerLambdaContext(fixedContext(30_000, 'isr-worker'));
  store.configure({ config });
});
afterAll(() => clients.dynamodb.destroy());

/** The sort keys of `pk`'s rows in the index under `status`. */
async function indexed(status: Status, pk: string): Promise<string[]> {
  const { Items } = await clients.dynamodb.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: StatusIndex.Name,
      KeyConditionExpression: '#shard = :shard',
      ExpressionAttributeNames: { '#shard': StatusIndex.PartitionKey },
      ExpressionAttributeValues: { ':shard': { S: statusShardOf(status, pk) } },
    }),
  );
  return (Items ?? []).filter((item) => item.pk?.S === pk).map((item) => item.sk?.S ?? '');
}

const call = () => {
  n += 1;
  return {
    pk: `CACHE#status-index-${n}`,
    key: `m-${n}`,
    request: { tenant: null, cacheKey: `/s/${n}`, deployId: 'd1' },
  };
};

describe('the sparse status index', () => {
  it('holds a REQ# row while STARTED, sorted by when it should have finished, and not once sealed', async () => {
    const c = call();
    await store.saveInProgress(c, 30_000);
    expect(await indexed(IndexedStatus.Started, c.pk)).toEqual([`REQ#${c.key}`]);
    const lease = await table.acquireLease({ pk: c.pk, now: clock.seconds, durationSeconds: 30 });
    expect(await indexed(IndexedStatus.Lease, c.pk)).toEqual(['LOCK']);
    await table.publishGeneration({
      observed: undefined,
      lease,
      now: clock.seconds,
      meta: { pk: c.pk, s3Key: 'pages/_/x/1', generatedAt: clock.seconds, revalidateSeconds: 60 },
      seal: { idempotencyKey: c.key, ttl: clock.seconds + 60 },
    });
    expect(await indexed(IndexedStatus.Started, c.pk)).toEqual([]);
    expect(await indexed(IndexedStatus.Lease, c.pk)).toEqual([]);
  });

  it('moves a REQ# row to FAILED when its call fails for good, and drops a completed one', async () => {
    const failed = call();
    await store.saveInProgress(failed, 30_000);
    await store.saveSuccess(failed, {
      settlement: Settlement.Failed,
      decision: 'refused',
      error: { code: 'refused:status', message: 'renderer answered 403' },
    });
    expect(await indexed(IndexedStatus.Failed, failed.pk)).toEqual([`REQ#${failed.key}`]);
    expect(await indexed(IndexedStatus.Started, failed.pk)).toEqual([]);

    const done = call();
    await store.saveInProgress(done, 30_000);
    await store.saveSuccess(done, { settlement: Settlement.Completed, decision: 'lease-held' });
    expect(await indexed(IndexedStatus.Started, done.pk)).toEqual([]);
    expect(await indexed(IndexedStatus.Failed, done.pk)).toEqual([]);
  });

  it('holds the META of a broken page until the next publish', async () => {
    const pk = call().pk;
    const publish = async (generatedAt: number) => {
      const lease = await table.acquireLease({ pk, now: generatedAt, durationSeconds: 30 });
      await table.publishGeneration({
        observed: undefined,
        lease,
        now: generatedAt,
        meta: { pk, s3Key: `pages/_/x/${generatedAt}`, generatedAt, revalidateSeconds: 60 },
      });
    };
    await publish(clock.seconds);
    const record = {
      count: 10,
      lastFailedAt: clock.seconds,
      nextAttemptAt: clock.seconds,
      error: 'x',
    };
    await table.recordFailure({
      pk,
      observedGeneratedAt: clock.seconds,
      previousCount: 0,
      record,
      broken: true,
    });
    expect(await indexed(IndexedStatus.Broken, pk)).toEqual(['META']);
    await publish(clock.seconds + 1);
    expect(await indexed(IndexedStatus.Broken, pk)).toEqual([]);
  });
});
