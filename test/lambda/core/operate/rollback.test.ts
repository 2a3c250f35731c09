/**
 * Versions and rollback on the real local backends (DynamoDB Local, s3rver): the publish
 * transaction's VER# rows, a rollback served at once, a held page left alone, and a regeneration
 * racing a rollback, with the negative control that shows which guard stops it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoCacheTable } from '../../../../lambda/adapters/cache-table/dynamodb.js';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { DynamoPageHistory } from '../../../../lambda/adapters/page-history/dynamodb.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { S3BodyStore } from '../../../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { CacheKey } from '../../../../lambda/core/page/model.js';
import type { Clock } from '../../../../lambda/core/clock.js';
import { DynamoRevalidationMarks } from '../../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { PageChangedError } from '../../../../lambda/core/errors.js';
import { isFresh } from '../../../../lambda/core/page/freshness.js';
import { seizeLease } from '../../../../lambda/core/page/lease.js';
import type { Renderer } from '../../../../lambda/core/regenerate/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import type { RegenerateDeps } from '../../../../lambda/core/regenerate/deps.js';
import {
  hold,
  release,
  rollback,
  type PageOpsDeps,
} from '../../../../lambda/core/operate/rollback.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestBucket, createTestTable, testClients } from '../../../helpers/backends.js';
import { shiftedClock, TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';

let clients: AwsClients;
let tableName: string;
let bucket: string;
let paths = 0;
const extraClients: AwsClients[] = [];

beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
  bucket = await createTestBucket(clients);
});
afterAll(() => {
  for (const c of [clients, ...extraClients]) {
    c.dynamodb.destroy();
    c.s3.destroy();
    c.sqs.destroy();
  }
});

/** Adapters on their own SDK clients (so a negative control can strip a guard from one actor). */
function adapters(own = clients) {
  const tables = { client: own.dynamodb, tableName };
  return {
    table: new DynamoCacheTable(tables),
    history: new DynamoPageHistory(tables),
    bodies: new S3BodyStore({ client: own.s3, bucket }),
  };
}

function freshClients(): AwsClients {
  const made = testClients();
  extraClients.push(made);
  return made;
}

function setup(page: PageFunction) {
  const clock = new TestClock();
  const { table, history, bodies } = adapters();
  const counter = countingRenderer(page);
  const cacheKey = normaliseCacheKey(
    { rawPath: `/rollback-${++paths}` },
    { allowedQueryParams: [] },
  );
  const regenerateDeps = (
    overrides: { renderer?: Renderer; clock?: Clock; own?: AwsClients } = {},
  ): RegenerateDeps => {
    const own = adapters(overrides.own);
    return {
      cacheTable: own.table,
      bodies: own.bodies,
      versions: own.history,
      renderer: overrides.renderer ?? counter.renderer,
      clock: overrides.clock ?? clock,
      leaseSeconds: 30,
      leaseRefreshMs: 3_600_000,
      renderTimeoutMs: 5_000,
      defaultRevalidateSeconds: 10,
      maxBodyBytes: 1024 * 1024,
    };
  };
  const ops: PageOpsDeps = { cacheTable: table, history, bodies, clock, leaseSeconds: 30 };
  const publish = async () => {
    const outcome = await regenerate(regenerateDeps(), { cacheKey, need: { kind: 'intent' } });
    clock.advance(11);
    return outcome;
  };
  const meta = () => table.getMeta(cacheKey.pk, { consistent: true });
  const served = async () => {
    const live = await meta();
    return new TextDecoder().decode((await bodies.getBody(live?.s3Key ?? '')).body);
  };
  return { clock, cacheKey, counter, regenerateDeps, ops, publish, meta, served, history };
}

describe('versions and rollback (DynamoDB Local, s3rver)', () => {
  it('publishes a VER# row in the same transaction, and rolls back to it: served at once', async () => {
    const ctx = setup((_r, call) => htmlPage(`v${call}`, { revalidateSeconds: 10 }));
    await ctx.publish();
    const v1 = await ctx.meta();
    await ctx.publish();
    const v2 = await ctx.meta();
    expect(v2?.versionSks).toEqual([v2?.currentSk, v1?.currentSk]);
    expect((await ctx.history.versions(ctx.cacheKey.pk)).map((v) => v.s3Key)).toEqual([
      v2?.s3Key,
      v1?.s3Key,
    ]);

    const result = await rollback(ctx.ops, { cacheKey: ctx.cacheKey, actor: 'ops' });
    expect(result.to).toBe(v1?.currentSk);
    expect(await ctx.served()).toBe('v1');
    const after = await ctx.meta();
    expect(after).toMatchObject({
      currentSk: v1?.currentSk,
      etag: v1?.etag,
      versionSks: v2?.versionSks,
    });
    expect(after?.rolledBack).toEqual({ fromSk: v2?.currentSk, at: ctx.clock.seconds, by: 'ops' });
  });

  it('refuses a rollback when META changed after it was read: the condition is on DynamoDB', async () => {
    const ctx = setup((_r, call) => htmlPage(`v${call}`, { revalidateSeconds: 10 }));
    await ctx.publish();
    await ctx.publish();
    const history = ctx.ops.history;
    const racing = Object.create(history) as DynamoPageHistory;
    racing.version = async (pk, sk) => {
      const found = await history.version(pk, sk);
      await ctx.publish();
      return found;
    };
    await expect(
      rollback({ ...ctx.ops, history: racing }, { cacheKey: ctx.cacheKey, actor: 'ops' }),
    ).rejects.toBeInstanceOf(PageChangedError);
    expect(await ctx.served()).toBe('v3');
  });

  it('leaves a held page alone: a queued regeneration is not rendered', async () => {
    const ctx = setup((_r, call) => htmlPage(`v${call}`, { revalidateSeconds: 10 }));
    await ctx.publish();
    await hold(ctx.ops, { cacheKey: ctx.cacheKey, holdSeconds: 600, actor: 'ops' });
    ctx.clock.advance(300);
    const outcome = await regenerate(ctx.regenerateDeps(), {
      cacheKey: ctx.cacheKey,
      need: { kind: 'intent' },
    });
    expect(outcome).toMatchObject({ decision: 'held' });
    expect(ctx.counter.calls).toBe(1);
    ctx.clock.advance(301);
    expect((await ctx.publish()).decision).toBe('new');
  });

  /**
   * A render under the lease is in flight when the operator rolls back. Its worker's clock runs
   * 5 s ahead (within the skew the service tolerates), so its generation is newer than the
   * rollback's and the monotonic guard alone would let it through: the publish's lease
   * condition (token, unexpired) is what stops it, since the rollback seized the lease.
   */
  async function raceRollback(stripLeaseCondition: boolean) {
    const ctx = setup((_r, call) => htmlPage(`v${call}`, { revalidateSeconds: 10 }));
    await ctx.publish();
    await ctx.publish();
    const own = freshClients();
    if (stripLeaseCondition) {
      removeGuard(own.dynamodb, Guard.leaseToken);
      removeGuard(own.dynamodb, Guard.leaseLive);
    }
    const ahead: Clock = shiftedClock(ctx.clock, 5_000);
    const racing = countingRenderer(async () => {
      await rollback(ctx.ops, { cacheKey: ctx.cacheKey, actor: 'ops' });
      return htmlPage('v3 (rendered before the rollback)', { revalidateSeconds: 10 });
    });
    const outcome = await regenerate(
      ctx.regenerateDeps({ renderer: racing.renderer, clock: ahead, own }),
      { cacheKey: ctx.cacheKey, need: { kind: 'intent' } },
    );
    return { outcome, served: await ctx.served() };
  }

  it('a regeneration racing a rollback cannot undo it', async () => {
    const { outcome, served } = await raceRollback(false);
    expect(outcome.decision).toBe('lease-lost');
    expect(served).toBe('v1');
  });

  it('negative control: without the publish’s lease condition, the racing regeneration undoes the rollback', async () => {
    const { outcome, served } = await raceRollback(true);
    expect(outcome.decision).toBe('new');
    expect(served).toBe('v3 (rendered before the rollback)');
  });

  /**
   * A revalidation marks the page stale between the hold's read of META and its write; then the
   * hold is lifted. `holdAs` is the hold. @returns META afterwards, and the time
   */
  async function holdAcrossRevalidation(
    holdAs: (ops: PageOpsDeps, cacheKey: CacheKey) => Promise<unknown>,
  ) {
    const ctx = setup((_r, call) => htmlPage(`v${call}`, { revalidateSeconds: 600 }));
    await ctx.publish();
    const marks = new DynamoRevalidationMarks({ client: clients.dynamodb, tableName });
    const table = ctx.ops.cacheTable;
    const racing: PageOpsDeps['cacheTable'] = {
      acquireLease: (input) => table.acquireLease(input),
      releaseLease: (lease) => table.releaseLease(lease),
      getMeta: async (pk, options) => {
        const read = await table.getMeta(pk, options);
        await marks.markStale(pk, { effectId: 'rv_between', now: ctx.clock.seconds });
        return read;
      },
    };
    await holdAs({ ...ctx.ops, cacheTable: racing }, ctx.cacheKey);
    await release(ctx.ops, { cacheKey: ctx.cacheKey });
    return { meta: await ctx.meta(), now: ctx.clock.seconds };
  }

  it('a hold keeps a revalidation that lands between its read and its write: after release the page is stale', async () => {
    const { meta, now } = await holdAcrossRevalidation((ops, cacheKey) =>
      hold(ops, { cacheKey, holdSeconds: 600, actor: 'ops' }),
    );
    expect(meta).toMatchObject({ revalidateSeconds: 0, revalidatedAt: now });
    expect(isFresh(meta!, now)).toBe(false);
  });

  it('negative control: a hold that writes META whole (as it once did) erases the revalidation', async () => {
    const { meta, now } = await holdAcrossRevalidation(async (ops, cacheKey) => {
      const read = await ops.cacheTable.getMeta(cacheKey.pk, { consistent: true });
      const lease = await seizeLease(ops.cacheTable, {
        pk: cacheKey.pk,
        now: ops.clock.now() / 1000,
        durationSeconds: 30,
        owner: 'hold:ops',
      });
      const held = { ...read!, holdUntil: Math.floor(ops.clock.now() / 1000) + 600 };
      await ops.history.restore({ lease, meta: held, expected: read!, now: held.holdUntil - 600 });
    });
    expect(meta?.revalidateSeconds).toBe(600);
    expect(isFresh(meta!, now)).toBe(true); // the violation: fresh with the body from before
  });
  /** A publish lands between the hold's read of META and its write. @returns the hold's outcome */
  async function holdAcrossPublish(withoutGenerationGuard: boolean) {
    const ctx = setup((_r, call) => htmlPage(`v${call}`, { revalidateSeconds: 10 }));
    await ctx.publish();
    const own = freshClients();
    if (withoutGenerationGuard) removeGuard(own.dynamodb, Guard.sameGeneration);
    const table = ctx.ops.cacheTable;
    const racing: PageOpsDeps['cacheTable'] = {
      acquireLease: (input) => table.acquireLease(input),
      releaseLease: (lease) => table.releaseLease(lease),
      getMeta: async (pk, options) => {
        const read = await table.getMeta(pk, options);
        await ctx.publish();
        return read;
      },
    };
    const ops = { ...ctx.ops, cacheTable: racing, history: adapters(own).history };
    const outcome = hold(ops, { cacheKey: ctx.cacheKey, holdSeconds: 600, actor: 'ops' });
    return { outcome: await outcome.catch((error: unknown) => error), meta: await ctx.meta() };
  }

  it('a hold is checked against the generation it read: a publish in between refuses it, nothing held', async () => {
    const { outcome, meta } = await holdAcrossPublish(false);
    expect(outcome).toBeInstanceOf(PageChangedError);
    expect(meta?.holdUntil).toBeUndefined();
  });

  it('negative control: without the generation condition, the hold lands on a page the operator never saw', async () => {
    const { outcome, meta } = await holdAcrossPublish(true);
    expect(outcome).toMatchObject({ decision: 'held' });
    expect(meta?.holdUntil).toBeDefined();
  });
});
