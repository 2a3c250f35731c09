/**
 * One sweep at a time on DynamoDB Local, without a reserved instance (issue 31, fix 7): the
 * sweep lease is a conditional write of a LOCK row with a TTL, through the page lease's own
 * code, on a frozen clock. A second run while one holds it skips; a crashed run's lease runs out
 * with the function's timeout; the deployed handler skips and says so. The negative control
 * takes the lease without its condition, and two runs then overlap.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AcquireLeaseInput } from '../../../lambda/core/page/ports.js';
import { SWEEP_LEASE_PK, SortKey } from '../../../lambda/core/page/rows.js';
import { runAlone, type SweepLeaseDeps } from '../../../lambda/core/operate/sweep-lease.js';
import { loadSweeperConfig } from '../../../lambda/shared/config.js';
import { buildSweeperHandler, createSweepLease } from '../../../lambda/sweeper/build.js';
import { TestClock } from '../../helpers/clock.js';
import { fixedContext } from '../../helpers/memory-service.js';
import { countingRenderer } from '../../helpers/renderers.js';
import { createWorkerHarness, type WorkerHarness } from '../../helpers/worker-harness.js';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';

const clock = new TestClock();
let h: WorkerHarness;
let lease: SweepLeaseDeps;

const config = () =>
  loadSweeperConfig({
    FACETHEORY_CACHE_TABLE_NAME: h.tableName,
    ISR_BODY_BUCKET: h.bucket,
    ISR_QUEUE_URL: 'http://localhost/unused.fifo',
    ISR_FUNCTION_TIMEOUT_MS: '120000',
    AWS_LAMBDA_FUNCTION_NAME: 'isr-sweeper',
  });

beforeAll(async () => {
  h = await createWorkerHarness({
    renderer: countingRenderer(() => htmlPage('x')).renderer,
    clock,
  });
  lease = createSweepLease(config(), { clients: h.clients, clock });
});
afterAll(() => h.destroy());

/** A run that lasts until the test lets it end. */
function pendingRun() {
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { work: () => done.then(() => 'swept'), finish };
}

const lockRow = () =>
  h.clients.dynamodb.send(
    new GetItemCommand({
      TableName: h.tableName,
      Key: { pk: { S: SWEEP_LEASE_PK }, sk: { S: SortKey.Lock } },
      ConsistentRead: true,
    }),
  );

describe('the sweep lease', () => {
  it('holds for the timeout and the skew margin, named after the function', () => {
    expect(lease.holdSeconds).toBe(120 + config().clockSkewMarginSeconds);
    expect(lease.owner).toBe('isr-sweeper');
  });

  it('skips a second run while the first holds it, and lets the next one in after', async () => {
    const first = pendingRun();
    const running = runAlone(lease, first.work);
    // The first run has taken the lease once its row is there.
    while ((await lockRow()).Item === undefined) await new Promise((r) => setImmediate(r));
    const second = await runAlone(lease, () => Promise.resolve('overlap'));
    expect(second).toEqual({
      ran: false,
      heldBy: expect.objectContaining({ owner: 'isr-sweeper' }),
    });
    first.finish();
    await expect(running).resolves.toEqual({ ran: true, result: 'swept' });
    // Released: the row is gone and the next run goes ahead.
    expect((await lockRow()).Item).toBeUndefined();
    await expect(runAlone(lease, () => Promise.resolve('next'))).resolves.toEqual({
      ran: true,
      result: 'next',
    });
  });

  it("lets a crashed run's lease run out: held until its time is up, then taken over", async () => {
    // What a run that died holding the lease leaves: its LOCK row, with a TTL for DynamoDB.
    await lease.table.acquireLease({
      pk: SWEEP_LEASE_PK,
      now: clock.seconds,
      durationSeconds: lease.holdSeconds,
      owner: 'crashed',
    });
    expect(Number((await lockRow()).Item?.ttl?.N)).toBeGreaterThan(clock.seconds);
    clock.advance(lease.holdSeconds - 1);
    await expect(runAlone(lease, () => Promise.resolve('early'))).resolves.toMatchObject({
      ran: false,
    });
    clock.advance(1);
    await expect(runAlone(lease, () => Promise.resolve('late'))).resolves.toEqual({
      ran: true,
      result: 'late',
    });
  });

  it('negative control: taken without its condition, two runs overlap', async () => {
    const unguarded: SweepLeaseDeps = {
      ...lease,
      table: {
        acquireLease: (input: AcquireLeaseInput) =>
          lease.table.acquireLease({ ...input, seize: true }),
        releaseLease: (held) => lease.table.releaseLease(held),
      },
    };
    const first = pendingRun();
    const running = runAlone(unguarded, first.work);
    while ((await lockRow()).Item === undefined) await new Promise((r) => setImmediate(r));
    await expect(runAlone(unguarded, () => Promise.resolve('overlap'))).resolves.toEqual({
      ran: true,
      result: 'overlap',
    });
    first.finish();
    await running;
  });

  it('the deployed handler skips a run while another holds the lease, and says so', async () => {
    const held = await lease.table.acquireLease({
      pk: SWEEP_LEASE_PK,
      now: clock.seconds,
      durationSeconds: lease.holdSeconds,
      owner: 'the other run',
    });
    let flushed = 0;
    const handler = buildSweeperHandler(config(), {
      clients: h.clients,
      clock,
      flushPendingPurges: () => Promise.resolve(++flushed),
    });
    await handler({} as Parameters<typeof handler>[0], fixedContext(60_000, 'isr-sweeper'));
    expect(flushed).toBe(0);
    await lease.table.releaseLease(held);
    await handler({} as Parameters<typeof handler>[0], fixedContext(60_000, 'isr-sweeper'));
    expect(flushed).toBe(1);
  });
});
