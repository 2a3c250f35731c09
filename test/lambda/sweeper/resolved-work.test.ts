/**
 * Work a later publish made moot leaves the sweeper's report on its own (issue 19, item 19), on
 * DynamoDB Local with the real worker: a FAILED or lost regeneration of a page that published
 * since is resolved with extra attributes (its `status` kept) and leaves the status index; a
 * failure after the last publish stays reported.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { RequestRowStore } from '../../../lambda/adapters/request-store/dynamodb.js';
import { Guard } from '../../../lambda/adapters/shared/dynamodb/conditions.js';
import { DynamoStatusIndexReader } from '../../../lambda/adapters/status-index-reader/dynamodb.js';
import { DynamoWorkResolution } from '../../../lambda/adapters/work-resolution/dynamodb.js';
import { createIdempotencyConfig } from '../../../lambda/core/idempotency.js';
import { runSweep } from '../../../lambda/core/operate/sweep.js';
import { RequestStatus, statusShardOf, IndexedStatus } from '../../../lambda/core/page/rows.js';
import { loadSweeperConfig } from '../../../lambda/shared/config.js';
import { createSweeperDeps } from '../../../lambda/sweeper/build.js';
import { testClients } from '../../helpers/backends.js';
import { TestClock } from '../../helpers/clock.js';
import { removeGuard } from '../../helpers/guard-mutation.js';
import { fixedContext } from '../../helpers/memory-service.js';
import { countingRenderer } from '../../helpers/renderers.js';
import {
  createWorkerHarness,
  intentFor,
  type WorkerHarness,
} from '../../helpers/worker-harness.js';

const clock = new TestClock();
let failing = false;
const counter = countingRenderer(() =>
  failing
    ? { ...htmlPage('per viewer'), headers: { 'cache-control': 'private, no-store' } }
    : htmlPage(`<p>at ${clock.seconds}</p>`, { revalidateSeconds: 60 }),
);
let h: WorkerHarness;
const own = testClients();

beforeAll(async () => {
  h = await createWorkerHarness({ renderer: counter.renderer, clock });
});
afterAll(() => {
  h.destroy();
  own.dynamodb.destroy();
});

const sweep = async () => {
  const config = loadSweeperConfig({
    FACETHEORY_CACHE_TABLE_NAME: h.tableName,
    ISR_BODY_BUCKET: h.bucket,
    ISR_QUEUE_URL: 'http://localhost/unused.fifo',
  });
  const report = await runSweep(createSweeperDeps(config, { clients: h.clients, clock }));
  expect(report.errors).toEqual([]);
  return report.tasks!;
};
const mine = <T extends { pk: string }>(pk: string, rows: readonly T[]) =>
  rows.filter((row) => row.pk === pk);

/** Sends one intent for `path` through the real worker, with the renderer failing or not. */
async function regenerate(path: string, fail: boolean): Promise<string> {
  failing = fail;
  const id = await h.send(intentFor(path));
  expect(await h.poll(1)).toMatchObject({ received: 1, failed: [] });
  clock.advance(1);
  return id;
}

describe('work a later publish made moot', () => {
  it('a FAILED regeneration leaves the report once its page publishes: resolved, status kept', async () => {
    const pk = h.keyFor('/healed').pk;
    const id = await regenerate('/healed', true);
    expect(mine(pk, (await sweep()).failed)).toHaveLength(1);

    await regenerate('/healed', false);
    const meta = await h.row(pk, 'META');
    const report = await sweep();
    expect(mine(pk, report.failed)).toEqual([]);
    expect(report.resolved).toBeGreaterThanOrEqual(1);
    const row = await h.row(pk, `REQ#${id}`);
    expect(row).toMatchObject({
      status: { S: 'FAILED' },
      resolved_by_generation: { N: meta?.generated_at?.N },
      resolved_at: { N: String(clock.seconds) },
    });
    expect(row?.status_shard).toBeUndefined();
  });

  it('a failure after the page’s last publish stays reported', async () => {
    const pk = h.keyFor('/broke-later').pk;
    await regenerate('/broke-later', false);
    clock.advance(61);
    await regenerate('/broke-later', true);
    expect(mine(pk, (await sweep()).failed)).toHaveLength(1);
  });

  it('a lost delivery leaves `missing` once its page publishes again', async () => {
    const store = new RequestRowStore({
      client: h.clients.dynamodb,
      tableName: h.tableName,
      clock,
    });
    const config = createIdempotencyConfig(3_600);
    config.registerLambdaContext(fixedContext(30_000, 'isr-worker'));
    store.configure({ config });
    const pk = h.keyFor('/lost').pk;
    await store.saveInProgress({ pk, key: 'lost-1', request: { path: '/lost' } }, 30_000);
    clock.advance(31);
    expect(mine(pk, (await sweep()).missing)).toHaveLength(1);

    await regenerate('/lost', false);
    expect(mine(pk, (await sweep()).missing)).toEqual([]);
    expect(await h.row(pk, 'REQ#lost-1')).toMatchObject({ status: { S: 'STARTED' } });
  });

  /** A FAILED row as the sweeper read it, then failed again (a new `status_at`) before the resolve. */
  async function resolveAfterItMoved(withoutGuard: boolean) {
    const pk = h.keyFor(`/moved-${String(withoutGuard)}`).pk;
    const id = await regenerate(`/moved-${String(withoutGuard)}`, true);
    const shard = statusShardOf(IndexedStatus.Failed, pk);
    const reader = new DynamoStatusIndexReader({
      client: h.clients.dynamodb,
      tableName: h.tableName,
    });
    const read = mine(pk, (await reader.readShard(shard, 1_000)).rows)[0];
    await h.clients.dynamodb.send(
      new UpdateItemCommand({
        TableName: h.tableName,
        Key: { pk: { S: pk }, sk: { S: `REQ#${id}` } },
        UpdateExpression: 'SET status_at = :later',
        ExpressionAttributeValues: { ':later': { N: String(read.at + 100) } },
      }),
    );
    if (withoutGuard) removeGuard(own.dynamodb, Guard.statusAtUnchanged);
    const resolution = new DynamoWorkResolution({ client: own.dynamodb, tableName: h.tableName });
    const input = { status: RequestStatus.Failed, generatedAt: read.at + 1, now: clock.seconds };
    return { resolved: await resolution.resolve(read, input), row: await h.row(pk, `REQ#${id}`) };
  }

  it('leaves a row that changed since it was read: it stays in the index', async () => {
    const { resolved, row } = await resolveAfterItMoved(false);
    expect(resolved).toBe(false);
    expect(row?.status_shard).toBeDefined();
  });

  it('negative control: without the status_at condition, the newer failure leaves the index unseen', async () => {
    const { resolved, row } = await resolveAfterItMoved(true);
    expect(resolved).toBe(true);
    expect(row?.status_shard).toBeUndefined();
  });
});
