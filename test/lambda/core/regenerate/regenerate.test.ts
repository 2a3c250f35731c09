import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoCacheTable } from '../../../../lambda/adapters/cache-table/dynamodb.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { DynamoPageHistory } from '../../../../lambda/adapters/page-history/dynamodb.js';
import { S3BodyStore } from '../../../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import {
  LeaseLostError,
  RenderRefusedError,
  RenderRetryableError,
} from '../../../../lambda/core/errors.js';
import type { RenderRequest } from '../../../../lambda/core/regenerate/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import type { RegenerateDeps } from '../../../../lambda/core/regenerate/deps.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestBucket, createTestTable, testClients } from '../../../helpers/backends.js';
import { TestClock } from '../../../helpers/clock.js';
import {
  countingRenderer,
  gate,
  untilAborted,
  type PageFunction,
} from '../../../helpers/renderers.js';
import { withOverrides } from '../../../helpers/overrides.js';

let clients: AwsClients;
let bucket: string;
let table: DynamoCacheTable;
let bodies: S3BodyStore;
let history: DynamoPageHistory;
let paths = 0;

beforeAll(async () => {
  clients = testClients();
  bucket = await createTestBucket(clients);
  const tableName = await createTestTable(clients);
  table = new DynamoCacheTable({ client: clients.dynamodb, tableName });
  history = new DynamoPageHistory({ client: clients.dynamodb, tableName });
  bodies = new S3BodyStore({ client: clients.s3, bucket });
});
afterAll(() => {
  clients.dynamodb.destroy();
  clients.s3.destroy();
});

function setup(
  page: PageFunction,
  overrides: Partial<RegenerateDeps> = {},
  clock = new TestClock(),
) {
  const counter = countingRenderer(page);
  const deps: RegenerateDeps = {
    cacheTable: table,
    bodies,
    versions: history,
    renderer: counter.renderer,
    clock,
    leaseSeconds: 30,
    renderTimeoutMs: 2_000,
    defaultRevalidateSeconds: 60,
    maxBodyBytes: 1024 * 1024,
    ...overrides,
  };
  const cacheKey = normaliseCacheKey({ rawPath: `/regen-${++paths}` }, { allowedQueryParams: [] });
  const run = (d: RegenerateDeps = deps) => regenerate(d, { cacheKey, need: { kind: 'intent' } });
  return { clock, counter, deps, cacheKey, run };
}

const text = async (s3Key: string) => {
  const got = await bodies.getBody(s3Key);
  return new TextDecoder().decode(got.body);
};
const keysUnder = async (hash: string) =>
  (
    (
      await clients.s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: `pages/_/${hash}/` }),
      )
    ).Contents ?? []
  ).map((object) => object.Key);
const lockOf = (pk: string) =>
  table.acquireLease({ pk, now: 0, durationSeconds: 1 }).then(
    () => 'free',
    () => 'held',
  );

describe('regenerate', () => {
  it('publishes a render under a new body key and releases the lease', async () => {
    const { run, cacheKey, clock } = setup((request) => htmlPage(`<p>${request.cacheKey.key}</p>`));
    const outcome = await run();
    expect(outcome.decision).toBe('new');
    const meta = await table.getMeta(cacheKey.pk, { consistent: true });
    expect(meta).toMatchObject({
      generatedAt: clock.seconds,
      revalidateSeconds: 60,
      statusCode: 200,
      cacheKey: cacheKey.key,
    });
    expect(meta?.s3Key).toMatch(new RegExp(`^pages/_/${cacheKey.hash}/[0-9a-f-]{36}$`));
    expect(await text(meta?.s3Key ?? '')).toBe(`<p>${cacheKey.key}</p>`);
    expect(await lockOf(cacheKey.pk)).toBe('free');
  });

  it('writes a version row with each publish and keeps the last N, dropping older rows and bodies', async () => {
    const { run, cacheKey, clock } = setup(
      (_request, call) => htmlPage(`v${call}`, { revalidateSeconds: 1 }),
      { keepVersions: 2 },
    );
    const metas = [];
    for (let i = 0; i < 3; i++) {
      expect((await run()).decision).toBe('new');
      metas.push(await table.getMeta(cacheKey.pk, { consistent: true }));
      clock.advance(2);
    }
    const [first, second, third] = metas;
    // Recipe B: META points at its version row and lists the kept ones, newest first.
    expect(third?.currentSk).toMatch(/^VER#\d{10}-[0-9a-f-]{36}$/);
    expect(third?.versionSks).toEqual([third?.currentSk, second?.currentSk]);
    const rows = await history.versions(cacheKey.pk);
    expect(rows.map((row) => row.sk)).toEqual([third?.currentSk, second?.currentSk]);
    expect(rows[1]).toMatchObject({
      s3Key: second?.s3Key,
      generatedAt: second?.generatedAt,
      etag: second?.etag,
      statusCode: 200,
      contentType: 'text/html; charset=utf-8',
    });
    // The dropped version's body goes with its row; the kept ones stay readable.
    expect(await keysUnder(cacheKey.hash)).toEqual(expect.not.arrayContaining([first?.s3Key]));
    expect(await text(second?.s3Key ?? '')).toBe('v2');
    expect(await text(third?.s3Key ?? '')).toBe('v3');
  });

  it('gives a gone page’s version row the TTL of its META; a page’s version rows have none', async () => {
    const gone = setup(() => htmlPage('not here', { status: 404, revalidateSeconds: 60 }));
    await gone.run();
    const goneMeta = await table.getMeta(gone.cacheKey.pk, { consistent: true });
    const [goneVersion] = await history.versions(gone.cacheKey.pk);
    expect(goneVersion?.ttl).toBe(goneMeta?.ttl);
    const page = setup(() => htmlPage('here'));
    await page.run();
    const [version] = await history.versions(page.cacheKey.pk);
    expect(version?.statusCode).toBe(200);
    expect(version?.ttl).toBeUndefined();
  });

  describe('keeps the last good page', () => {
    async function failAfterGoodPage(
      failure: (clock: TestClock) => PageFunction,
      overrides: Partial<RegenerateDeps> = {},
    ) {
      const clock = new TestClock();
      const failing = failure(clock);
      const ctx = setup(
        (request, call) =>
          call === 1 ? htmlPage('good page', { revalidateSeconds: 1 }) : failing(request, call),
        overrides,
        clock,
      );
      await ctx.run();
      const before = await table.getMeta(ctx.cacheKey.pk, { consistent: true });
      ctx.clock.advance(2);
      const result = await ctx.run().then(
        (outcome) => ({ outcome, error: undefined }),
        (error: unknown) => ({ outcome: undefined, error }),
      );
      return {
        ...result,
        before,
        after: await table.getMeta(ctx.cacheKey.pk, { consistent: true }),
        liveText: await text(before?.s3Key ?? ''),
        lock: await lockOf(ctx.cacheKey.pk),
        objects: await keysUnder(ctx.cacheKey.hash),
      };
    }

    it.each([
      ['a 5xx answer', () => () => htmlPage('oops', { status: 503 })],
      ['a thrown error', () => () => Promise.reject(new Error('template crashed'))],
      [
        'a render that times out',
        // It hangs; the clock passes the 100 ms timeout while it does.
        (clock: TestClock) => (request: RenderRequest) => {
          const hung = untilAborted(request.signal);
          clock.advanceMs(100);
          return hung;
        },
      ],
    ])('after %s: retryable, META and body untouched, lease released', async (_label, failure) => {
      const result = await failAfterGoodPage(failure, { renderTimeoutMs: 100 });
      expect(result.error).toBeInstanceOf(RenderRetryableError);
      expect(result.after).toEqual(result.before);
      expect(result.liveText).toBe('good page');
      expect(result.lock).toBe('free');
      expect(result.objects).toEqual([result.before?.s3Key]);
    });

    it('after a refused page (403): refused for good, META and body untouched, lease released', async () => {
      const result = await failAfterGoodPage(() => () => htmlPage('forbidden', { status: 403 }));
      expect(result.error).toBeInstanceOf(RenderRefusedError);
      expect(result.error).toMatchObject({ code: 'refused:status', status: 403 });
      expect(result.after).toEqual(result.before);
      expect(result.lock).toBe('free');
    });

    it('after an oversized page: refused for good, nothing written', async () => {
      const result = await failAfterGoodPage(() => () => htmlPage('x'.repeat(2048)), {
        maxBodyBytes: 1024,
      });
      expect(result.error).toMatchObject({ code: 'refused:too-large' });
      expect(result.objects).toEqual([result.before?.s3Key]);
    });
  });

  it('publishes a 404 as a page of its own, so a gone page is not retried forever', async () => {
    // Published as a page (a small gone path's 404 is kept inline otherwise: gone.test.ts).
    const { run, cacheKey } = setup(() => htmlPage('not here', { status: 404 }), {
      goneInlineMaxBytes: 0,
    });
    expect((await run()).decision).toBe('new');
    expect((await table.getMeta(cacheKey.pk, { consistent: true }))?.statusCode).toBe(404);
  });

  describe('long renders', () => {
    /** Long enough that only the lease, never the render's own timeout, decides these. */
    const LONG = { renderTimeoutMs: 60_000 };

    /**
     * The render outlasts the lease: the test clock jumps 40 s past a 30 s lease mid-render, and
     * the render ends once `settled` says the keeper had its chance to refresh.
     */
    const longRender = (clock: TestClock, settled: () => Promise<void>) => async () => {
      clock.advance(40);
      await settled();
      return htmlPage('slow page');
    };

    /** The table, telling when a refresh of the lease has landed. */
    function refreshWatched() {
      const refreshed = gate();
      const watched = withOverrides(table, {
        refreshLease: async (lease, input) => {
          const refreshedLease = await table.refreshLease(lease, input);
          refreshed.open();
          return refreshedLease;
        },
      });
      return { watched, refreshed };
    }

    it('keeps the lease by refreshing it, and publishes', async () => {
      const ctx = setup(() => htmlPage('unused'), { ...LONG, leaseRefreshMs: 50 });
      const { watched, refreshed } = refreshWatched();
      const renderer = countingRenderer(longRender(ctx.clock, refreshed.wait)).renderer;
      expect((await ctx.run({ ...ctx.deps, cacheTable: watched, renderer })).decision).toBe('new');
    });

    it('negative control: without refresh, the lease runs out and nothing is published', async () => {
      // The keeper is not due within the render's 40 s: no refresh happens at all.
      const ctx = setup(() => htmlPage('unused'), { ...LONG, leaseRefreshMs: 60_000 });
      const renderer = countingRenderer(longRender(ctx.clock, () => Promise.resolve())).renderer;
      expect((await ctx.run({ ...ctx.deps, renderer })).decision).toBe('lease-lost');
      expect(await table.getMeta(ctx.cacheKey.pk, { consistent: true })).toBeUndefined();
      expect(await keysUnder(ctx.cacheKey.hash)).toEqual([]); // the orphan body was deleted
    });

    it('stops the render as soon as a refresh finds the lease taken over', async () => {
      const ctx = setup(() => htmlPage('unused'), { ...LONG, leaseRefreshMs: 50 });
      let stolen = false;
      let stoppedBy: unknown;
      const deps = {
        ...ctx.deps,
        // A render that never ends on its own: only an abort stops it.
        renderer: countingRenderer(async (request) => {
          // Another worker, its clock 31 s on, takes the lease over; then our keeper is due.
          await table.acquireLease({
            pk: ctx.cacheKey.pk,
            now: ctx.clock.seconds + 31,
            durationSeconds: 30,
          });
          stolen = true;
          ctx.clock.advance(31);
          return untilAborted(request.signal).catch((error: unknown) => {
            stoppedBy = request.signal.reason;
            throw error;
          });
        }).renderer,
      };
      expect((await ctx.run(deps)).decision).toBe('lease-lost');
      expect(stolen).toBe(true);
      expect(stoppedBy).toBeInstanceOf(LeaseLostError);
      expect(await keysUnder(ctx.cacheKey.hash)).toEqual([]);
    });
  });

  it('deletes its body and reports lease-lost when another worker published meanwhile', async () => {
    const ctx = setup(() => htmlPage('unused'), {
      leaseRefreshMs: 60_000,
      renderTimeoutMs: 60_000,
    });
    const other = setup(() => htmlPage('by the other worker'));
    const deps = {
      ...ctx.deps,
      renderer: countingRenderer(async () => {
        ctx.clock.advance(31); // our lease runs out; another worker takes over and publishes
        await regenerate(
          { ...other.deps, clock: ctx.clock },
          { cacheKey: ctx.cacheKey, need: { kind: 'intent' } },
        );
        return htmlPage('stale render');
      }).renderer,
    };
    expect((await ctx.run(deps)).decision).toBe('lease-lost');
    const meta = await table.getMeta(ctx.cacheKey.pk, { consistent: true });
    expect(await text(meta?.s3Key ?? '')).toBe('by the other worker');
    expect(await keysUnder(ctx.cacheKey.hash)).toEqual([meta?.s3Key]);
  });

  it('leaves its orphan to the sweeper when it may not delete it (the origin has no s3:DeleteObject)', async () => {
    const warnings: string[] = [];
    const ctx = setup(() => htmlPage('unused'), {
      leaseRefreshMs: 60_000,
      renderTimeoutMs: 60_000,
      log: { warn: (message) => warnings.push(message) },
    });
    const other = setup(() => htmlPage('by the other worker'));
    const noDelete = withOverrides(bodies, {
      deleteBody: () => Promise.reject(new Error('AccessDenied')),
    });
    const deps = {
      ...ctx.deps,
      bodies: noDelete,
      renderer: countingRenderer(async () => {
        ctx.clock.advance(31);
        await regenerate(
          { ...other.deps, clock: ctx.clock },
          { cacheKey: ctx.cacheKey, need: { kind: 'intent' } },
        );
        return htmlPage('stale render');
      }).renderer,
    };
    expect((await ctx.run(deps)).decision).toBe('lease-lost');
    const live = (await table.getMeta(ctx.cacheKey.pk, { consistent: true }))?.s3Key;
    const orphan = (await keysUnder(ctx.cacheKey.hash)).find((key) => key !== live) ?? '';
    expect(await text(orphan)).toBe('stale render');
    expect(warnings).toContain('could not delete an unreferenced body; the sweeper will');
  });

  it('retires the body a crashed holder left when it takes over the expired lease', async () => {
    const ctx = setup((_request, call) => htmlPage(`render ${call}`));
    const crashing = withOverrides(table, {
      // the process dies after the body write: no publish, no release
      publishGeneration: () => Promise.reject(new Error('crash')),
      releaseLease: () => Promise.reject(new Error('crash')),
    });
    await expect(ctx.run({ ...ctx.deps, cacheTable: crashing })).rejects.toThrow('crash');
    const [abandoned = ''] = await keysUnder(ctx.cacheKey.hash);
    expect(await text(abandoned)).toBe('render 1');

    ctx.clock.advance(31);
    expect((await ctx.run()).decision).toBe('new');
    const live = (await table.getMeta(ctx.cacheKey.pk, { consistent: true }))?.s3Key ?? '';
    expect(await text(live)).toBe('render 2');
    expect(await keysUnder(ctx.cacheKey.hash)).toEqual([live]);
    expect(abandoned).not.toBe(live);
  });

  it('takes over a lease whose holder crashed before writing a body: nothing to retire, no warning', async () => {
    const warnings: string[] = [];
    const ctx = setup(() => htmlPage('page'), {
      log: { warn: (message) => warnings.push(message) },
    });
    await table.acquireLease({ pk: ctx.cacheKey.pk, now: ctx.clock.seconds, durationSeconds: 30 });
    ctx.clock.advance(31);
    expect((await ctx.run()).decision).toBe('new');
    expect(await keysUnder(ctx.cacheKey.hash)).toHaveLength(1);
    expect(warnings).toEqual([]);
  });

  describe('a publish that fails with an error', () => {
    it('deletes its body once the release proves nothing was committed', async () => {
      const ctx = setup(() => htmlPage('never published'));
      const failing = withOverrides(table, {
        publishGeneration: () => Promise.reject(new Error('ValidationException')),
      });
      await expect(ctx.run({ ...ctx.deps, cacheTable: failing })).rejects.toThrow(
        'ValidationException',
      );
      expect(await table.getMeta(ctx.cacheKey.pk, { consistent: true })).toBeUndefined();
      expect(await keysUnder(ctx.cacheKey.hash)).toEqual([]);
      expect(await lockOf(ctx.cacheKey.pk)).toBe('free');
    });

    it('keeps its body when the lease was already gone: the publish may have committed', async () => {
      const ctx = setup(() => htmlPage('committed page'));
      const lossy = withOverrides(table, {
        publishGeneration: async (input) => {
          await table.publishGeneration(input);
          throw new Error('socket hang up'); // committed, answer lost, not retried
        },
      });
      await expect(ctx.run({ ...ctx.deps, cacheTable: lossy })).rejects.toThrow('socket hang up');
      const meta = await table.getMeta(ctx.cacheKey.pk, { consistent: true });
      expect(await text(meta?.s3Key ?? '')).toBe('committed page');
    });
  });

  it('keeps its body when a publish committed but its answer was lost', async () => {
    const ctx = setup(() => htmlPage('committed page'));
    let calls = 0;
    const lossy = withOverrides(table, {
      // The answer of the committed call is lost and the SDK retries it: the retry finds LOCK gone.
      publishGeneration: async (input) => {
        calls += 2;
        await table.publishGeneration(input);
        await table.publishGeneration(input);
      },
    });
    const outcome = await ctx.run({ ...ctx.deps, cacheTable: lossy });
    expect(outcome.decision).toBe('new');
    expect(calls).toBe(2); // the retry found LOCK gone; META showed the publish was ours
    const meta = await table.getMeta(ctx.cacheKey.pk, { consistent: true });
    expect(await text(meta?.s3Key ?? '')).toBe('committed page');
  });

  describe('a lease that ran out before the render', () => {
    /** The caller pauses between taking the lease and rendering (here: during the META read). */
    async function pausedAfterAcquire(pauseSeconds: number, overrides: Partial<RegenerateDeps>) {
      // A paused process refreshes nothing during its pause: the keeper is not due.
      const ctx = setup(() => htmlPage('page'), { leaseRefreshMs: 3_600_000, ...overrides });
      const pausing = withOverrides(table, {
        getMeta: async (pk, options) => {
          const meta = await table.getMeta(pk, options);
          ctx.clock.advance(pauseSeconds);
          return meta;
        },
      });
      const outcome = await ctx.run({ ...ctx.deps, cacheTable: pausing });
      return { outcome, renders: ctx.counter.calls };
    }

    it('does not start a render once the lease has run out on its own clock', async () => {
      const { outcome, renders } = await pausedAfterAcquire(31, {});
      expect(outcome.decision).toBe('lease-lost');
      expect(renders).toBe(0);
    });

    it('does not start a render with less lease left than the clock-skew margin', async () => {
      const { outcome, renders } = await pausedAfterAcquire(26, { clockSkewMarginSeconds: 5 });
      expect(outcome.decision).toBe('lease-lost');
      expect(renders).toBe(0);
      expect((await pausedAfterAcquire(24, { clockSkewMarginSeconds: 5 })).renders).toBe(1);
    });

    it('negative control: without the check, it renders under a dead lease (and its publish is refused)', async () => {
      const { outcome, renders } = await pausedAfterAcquire(31, {
        clockSkewMarginSeconds: -Infinity,
      });
      expect(renders).toBe(1);
      expect(outcome.decision).toBe('lease-lost');
    });
  });

  it('skips the render when META is fresh once the lease is held', async () => {
    const { run, counter, cacheKey } = setup(() => htmlPage('page'));
    expect((await run()).decision).toBe('new');
    expect((await run()).decision).toBe('fresh');
    expect(counter.calls).toBe(1);
    expect(await lockOf(cacheKey.pk)).toBe('free');
  });
});
