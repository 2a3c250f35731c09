/**
 * The sweeper on the real local backends (DynamoDB Local, s3rver, local-aws-sqs), with the
 * worker's own table, bucket and queues: what a crash, a dead letter, an abandoned lease and a
 * lost publish leave behind is reported, and orphan bodies are retired, on a frozen clock.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { RequestRowStore } from '../../../lambda/adapters/request-store/dynamodb.js';
import { BodyNotFoundError } from '../../../lambda/core/errors.js';
import type { BodyReferences } from '../../../lambda/core/operate/ports.js';
import { SweepCursorKey, bodyKeyOf } from '../../../lambda/core/page/rows.js';
import { runSweep, type SweepDeps } from '../../../lambda/core/operate/sweep.js';
import { loadSweeperConfig } from '../../../lambda/shared/config.js';
import { createIdempotencyConfig } from '../../../lambda/core/idempotency.js';
import { buildSweeperHandler, createSweeperDeps } from '../../../lambda/sweeper/build.js';
import { TestClock } from '../../helpers/clock.js';
import { fixedContext } from '../../helpers/memory-service.js';
import { countingRenderer } from '../../helpers/renderers.js';
import {
  createWorkerHarness,
  intentFor,
  type WorkerHarness,
} from '../../helpers/worker-harness.js';

const clock = new TestClock();
const counter = countingRenderer((request) =>
  request.cacheKey.path.startsWith('/private')
    ? { ...htmlPage('per viewer'), headers: { 'cache-control': 'private, no-store' } }
    : htmlPage(`<p>${request.cacheKey.key} at ${clock.seconds}</p>`, { revalidateSeconds: 60 }),
);
let h: WorkerHarness;

beforeAll(async () => {
  h = await createWorkerHarness({ renderer: counter.renderer, clock });
});
afterAll(() => h.destroy());

/** The sweeper's deps on the harness's table and bucket; `env` overrides its settings. */
function sweeper(env: Record<string, string> = {}): SweepDeps {
  const config = loadSweeperConfig({
    FACETHEORY_CACHE_TABLE_NAME: h.tableName,
    ISR_BODY_BUCKET: h.bucket,
    ISR_QUEUE_URL: 'http://localhost/unused.fifo',
    ...env,
  });
  return createSweeperDeps(config, { clients: h.clients, clock });
}

const sweepTasks = async () => {
  const report = await runSweep(sweeper());
  expect(report.errors).toEqual([]);
  return report.tasks!;
};

const exists = async (s3Key: string): Promise<boolean> =>
  h.bodies.getBody(s3Key).then(
    () => true,
    (error: unknown) => {
      if (error instanceof BodyNotFoundError) return false;
      throw error;
    },
  );

describe('the sweeper reports work that needs an operator', () => {
  it('reports a crashed delivery as missing once past its expected completion, not before', async () => {
    // What a delivery that crashed after its claim leaves: REQ# STARTED, never completed.
    const store = new RequestRowStore({
      client: h.clients.dynamodb,
      tableName: h.tableName,
      clock,
    });
    const config = createIdempotencyConfig(3_600);
    config.registerLambdaContext(fixedContext(30_000, 'isr-worker'));
    store.configure({ config });
    const pk = h.keyFor('/crashed').pk;
    await store.saveInProgress({ pk, key: 'crashed-1', request: { path: '/crashed' } }, 30_000);
    const sk = 'REQ#crashed-1';
    const mine = (rows: readonly { pk: string }[]) => rows.filter((row) => row.pk === pk);

    const before = await sweepTasks();
    expect(mine(before.missing)).toEqual([]);
    expect(before.startedOpen).toBeGreaterThanOrEqual(1);
    clock.advance(30); // exactly due: not past yet
    expect(mine((await sweepTasks()).missing)).toEqual([]);
    clock.advance(1);
    expect(mine((await sweepTasks()).missing)).toEqual([
      expect.objectContaining({ sk, at: clock.seconds - 1, owner: 'isr-worker/request-1' }),
    ]);
  });

  it('reports a dead-lettered intent as FAILED with its reason', async () => {
    const id = await h.send(intentFor('/private'));
    expect(await h.poll(1)).toMatchObject({ received: 1, failed: [] });
    expect(await h.deadLetters()).toHaveLength(1);
    const pk = h.keyFor('/private').pk;
    expect(await h.row(pk, `REQ#${id}`)).toMatchObject({
      status: { S: 'FAILED' },
      error_code: { S: 'refused:uncacheable' },
    });
    const failed = (await sweepTasks()).failed.filter((row) => row.pk === pk);
    expect(failed).toEqual([
      expect.objectContaining({ sk: `REQ#${id}`, errorCode: 'refused:uncacheable' }),
    ]);
    expect(failed[0]?.error).toEqual(expect.any(String));
  });

  it('reports a LOCK whose lease ran out without a publish or a release', async () => {
    const pk = h.keyFor('/abandoned').pk;
    await h.cacheTable.acquireLease({
      pk,
      now: clock.seconds,
      durationSeconds: 30,
      owner: 'isr-worker/crashed',
    });
    const mine = async () => (await sweepTasks()).abandoned.filter((row) => row.pk === pk);
    expect(await mine()).toEqual([]);
    clock.advance(31);
    expect(await mine()).toEqual([
      expect.objectContaining({ sk: 'LOCK', owner: 'isr-worker/crashed' }),
    ]);
  });
});

describe('the sweeper retires orphan bodies', () => {
  /** Publishes `path` through the real worker; returns META's body key. */
  const publish = async (path: string): Promise<string> => {
    await h.send(intentFor(path));
    expect(await h.poll(1)).toMatchObject({ received: 1, failed: [] });
    const meta = await h.row(h.keyFor(path).pk, 'META');
    return meta?.s3_key?.S ?? '';
  };
  const putBody = (s3Key: string) =>
    h.bodies.putBody({ s3Key, body: new TextEncoder().encode('x'), contentType: 'text/html' });

  let kept: string;
  let live: string;
  let orphan: string;
  let leased: string;

  beforeAll(async () => {
    kept = await publish('/page');
    clock.advance(61); // stale: the next intent renders a new generation
    live = await publish('/page');
    const key = h.keyFor('/page');
    orphan = bodyKeyOf(key, 'lost-publish');
    await putBody(orphan);
    // A render holding its lease: its body is not published yet, and must stay.
    const rendering = h.keyFor('/rendering');
    const lease = await h.cacheTable.acquireLease({
      pk: rendering.pk,
      now: clock.seconds,
      durationSeconds: 3 * 3_600,
    });
    leased = bodyKeyOf(rendering, lease.token);
    await putBody(leased);
    clock.advance(3_601); // every body is now past the safety window
  });

  it('retires a body nothing points to, never the one META or a kept version names', async () => {
    expect(kept).not.toBe(live);
    const versions = await h.row(h.keyFor('/page').pk, 'META');
    expect(versions?.version_sks?.L).toHaveLength(2);
    const report = await runSweep(sweeper());
    expect(report.errors).toEqual([]);
    expect(report.orphans?.retired).toEqual([orphan]);
    expect(await exists(orphan)).toBe(false);
    expect(await exists(kept)).toBe(true);
    expect(await exists(live)).toBe(true);
    // The live lease on the body's token keeps it, past the safety window or not.
    expect(await exists(leased)).toBe(true);
    expect(report.orphans).toMatchObject({ inUse: 2, leased: 1 });
  });

  it('negative control: without the "pointed to" check, the live and the kept body would go', async () => {
    const deps = sweeper();
    const real = deps.orphans.references;
    const blind: BodyReferences = {
      of: async (pk) => ({ ...(await real.of(pk)), s3Keys: new Set() }),
      forgetUnlisted: (pk, sks) => real.forgetUnlisted(pk, sks),
    };
    const report = await runSweep({ ...deps, orphans: { ...deps.orphans, references: blind } });
    expect(report.orphans?.retired).toEqual(expect.arrayContaining([kept, live]));
    expect(await exists(live)).toBe(false);
    expect(await exists(leased)).toBe(true);
  });

  it('negative control: without the live-lease check, the body being rendered would go', async () => {
    const deps = sweeper();
    const real = deps.orphans.references;
    const leaseBlind: BodyReferences = {
      of: async (pk) => ({ ...(await real.of(pk)), lease: undefined }),
      forgetUnlisted: (pk, sks) => real.forgetUnlisted(pk, sks),
    };
    const report = await runSweep({
      ...deps,
      orphans: { ...deps.orphans, references: leaseBlind },
    });
    expect(report.orphans?.retired).toEqual([leased]);
    expect(await exists(leased)).toBe(false);
  });
});

describe('the orphan sweep cursor', () => {
  it('makes successive bounded runs cover every body, then starts a new lap', async () => {
    const keys = ['a', 'b', 'c', 'd', 'e'].map((token) => `lap/_/hash/${token}`);
    for (const key of keys)
      await h.bodies.putBody({ s3Key: key, body: new Uint8Array([1]), contentType: 'text/plain' });
    clock.advance(3_601);
    const deps = sweeper({ ISR_BODY_PREFIX: 'lap/', ISR_ORPHAN_LIST_LIMIT: '2' });
    const cursor = async () =>
      (
        await h.clients.dynamodb.send(
          new GetItemCommand({
            TableName: h.tableName,
            Key: { pk: { S: SweepCursorKey.pk }, sk: { S: SweepCursorKey.sk } },
            ConsistentRead: true,
          }),
        )
      ).Item?.continuation?.S;

    const retired: string[] = [];
    const laps: boolean[] = [];
    const cursors: (string | undefined)[] = [];
    for (let run = 0; run < 3; run++) {
      const { orphans, errors } = await runSweep(deps);
      expect(errors).toEqual([]);
      expect(orphans?.listed).toBeLessThanOrEqual(2);
      retired.push(...(orphans?.retired ?? []));
      laps.push(orphans?.lapComplete ?? false);
      cursors.push(await cursor());
    }
    expect(laps).toEqual([false, false, true]);
    expect(retired.sort()).toEqual(keys);
    // Kept between runs while the lap goes on; gone once it reached the end.
    expect(cursors).toEqual([expect.any(String), expect.any(String), undefined]);
  });

  it('runs as the deployed handler does, from configuration alone', async () => {
    const config = loadSweeperConfig({
      FACETHEORY_CACHE_TABLE_NAME: h.tableName,
      ISR_BODY_BUCKET: h.bucket,
      ISR_QUEUE_URL: 'http://localhost/unused.fifo',
    });
    let flushed = 0;
    const handler = buildSweeperHandler(config, {
      clients: h.clients,
      clock,
      flushPendingPurges: () => Promise.resolve(++flushed),
    });
    await handler({} as Parameters<typeof handler>[0], fixedContext(60_000, 'isr-sweeper'));
    expect(flushed).toBe(1);
  });
});
