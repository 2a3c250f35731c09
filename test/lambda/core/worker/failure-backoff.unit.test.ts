import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import type { RegenerationIntent } from '../../../../lambda/core/page/intent.js';
import { encodeIntent } from '../../../../lambda/core/page/intent.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';
import { intentFor, message } from '../../../helpers/worker-harness.js';

/** A page that renders once, then answers `failure` until `healed()` is called. */
function brokenAfterFirst(failure: PageFunction = () => htmlPage('down', { status: 503 })) {
  let healthy = false;
  const counter = countingRenderer((request, call) =>
    call === 1 || healthy
      ? htmlPage(`good #${call}`, { revalidateSeconds: 10 })
      : failure(request, call),
  );
  return { counter, heal: () => (healthy = true) };
}

/** What a negative control takes away from the worker and the origin. */
interface Without {
  /** The failure record's TTL extension. */
  readonly ttlExtension?: boolean;
  /** META's TTL as the origin and the worker read it (so a broken page is never due). */
  readonly ttlRead?: boolean;
}

function setup(
  failure?: PageFunction,
  policy = { backoffSeconds: 15, brokenAfter: 10 },
  without: Without = {},
) {
  const page = brokenAfterFirst(failure);
  const service = memoryService({ renderer: page.counter.renderer });
  const table = service.cacheTable;
  const cacheTable = Object.create(table) as typeof table;
  if (without.ttlExtension === true) {
    cacheTable.recordFailure = (input) => table.recordFailure({ ...input, ttl: undefined });
  }
  if (without.ttlRead === true) {
    cacheTable.getMeta = async (pk, options) => {
      const meta = await table.getMeta(pk, options);
      return meta && { ...meta, ttl: undefined };
    };
  }
  const workerDeps = { ...service.workerDeps, cacheTable, failurePolicy: policy };
  const originDeps = { ...service.originDeps, cacheTable, failurePolicy: policy };
  const pk = service.keyFor('/p').pk;
  let ids = 0;
  const get = () =>
    servePage(originDeps, {
      method: 'GET',
      rawPath: '/p',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    });
  /** Delivers every queued intent to the worker, once each. */
  const work = async () => {
    const reports = [];
    for (const queued of service.queue.drain()) {
      reports.push(
        await processMessage(workerDeps, message(`m${++ids}`, encodeIntent(queued.intent))),
      );
    }
    return reports;
  };
  const deliver = (intent: Partial<RegenerationIntent>) =>
    processMessage(workerDeps, message(`m${++ids}`, intentFor('/p', intent)));
  const meta = () => service.cacheTable.getMeta(pk);
  return { ...service, ...page, get, work, deliver, meta };
}

describe('a page whose regeneration keeps failing', () => {
  it('keeps its last good page, records the failure on META and acknowledges the intent', async () => {
    const ctx = setup();
    await ctx.get();
    const good = await ctx.meta();
    ctx.clock.advance(11);
    expect((await ctx.get()).cacheStatus).toBe('STALE');
    const [report] = await ctx.work();
    expect(report).toMatchObject({
      decision: 'render-failed',
      action: 'ack',
      detail: { failures: 1 },
    });
    const after = await ctx.meta();
    expect(after?.s3Key).toBe(good?.s3Key);
    expect(after?.failures).toMatchObject({
      count: 1,
      lastFailedAt: ctx.clock.seconds,
      nextAttemptAt: ctx.clock.seconds + 15,
      error: expect.stringMatching(/^render-failed: renderer answered 503/) as unknown as string,
    });
  });

  it('queues nothing from stale hits inside the backoff, and lets the CDN keep the stale page until then', async () => {
    const ctx = setup();
    await ctx.get();
    ctx.clock.advance(11);
    await ctx.get();
    await ctx.work();
    ctx.clock.advance(5);
    const reply = await ctx.get();
    expect(reply).toMatchObject({
      status: 200,
      cacheStatus: 'STALE',
      detail: { enqueue: 'backing-off' },
    });
    expect(reply.headers['cache-control']).toContain('s-maxage=10,');
    expect(ctx.queue.messages).toHaveLength(0);
    ctx.clock.advance(10);
    expect((await ctx.get()).detail).toMatchObject({ enqueue: 'enqueued' });
  });

  it('acknowledges without a render an intent that arrives inside the backoff, unless it is explicit', async () => {
    const ctx = setup();
    await ctx.get();
    const good = await ctx.meta();
    ctx.clock.advance(11);
    await ctx.deliver({ observedGeneratedAt: good?.generatedAt });
    const renders = ctx.counter.calls;
    const queued = await ctx.deliver({ observedGeneratedAt: good?.generatedAt });
    expect(queued).toMatchObject({
      decision: 'backoff',
      action: 'ack',
      detail: { retryState: 'backing-off' },
    });
    expect(ctx.counter.calls).toBe(renders);
    const explicit = await ctx.deliver({}); // no observed generation: someone asked for it
    expect(explicit.decision).toBe('render-failed');
    expect(ctx.counter.calls).toBe(renders + 1);
  });

  it('dead-letters a refusal at once and backs off too', async () => {
    const ctx = setup(() => htmlPage('no', { status: 403 }));
    await ctx.get();
    ctx.clock.advance(11);
    await ctx.get();
    const [report] = await ctx.work();
    expect(report).toMatchObject({
      decision: 'refused',
      action: 'dead-letter',
      reason: { code: 'refused:status' },
    });
    expect((await ctx.meta())?.failures?.count).toBe(1);
    expect((await ctx.get()).detail).toMatchObject({ enqueue: 'backing-off' });
  });

  it('is reported broken after brokenAfter failures, then only retried on request', async () => {
    const ctx = setup(undefined, { backoffSeconds: 1, brokenAfter: 3 });
    await ctx.get();
    const reports = [];
    for (let i = 0; i < 3; i++) {
      ctx.clock.advance(20);
      await ctx.get();
      reports.push(...(await ctx.work()));
    }
    expect(reports.at(-1)).toMatchObject({
      decision: 'render-failed',
      detail: { failures: 3, broken: true },
    });
    ctx.clock.advance(3_600);
    expect((await ctx.get()).detail).toMatchObject({ enqueue: 'broken' });
    expect(ctx.queue.messages).toHaveLength(0);
  });

  it('clears its failures with the next publish', async () => {
    const ctx = setup();
    await ctx.get();
    ctx.clock.advance(11);
    await ctx.get();
    await ctx.work();
    ctx.heal();
    ctx.clock.advance(30); // past the backoff and the FIFO dedupe window

    await ctx.get();
    const [report] = await ctx.work();
    expect(report?.decision).toBe('new');
    expect((await ctx.meta())?.failures).toBeUndefined();
  });

  it('costs renders that grow with log(time), not with its traffic', async () => {
    /** Renders of one broken page under `perSecond` stale hits a second for `seconds`. */
    async function rendersUnder(perSecond: number, seconds: number, backoffSeconds: number) {
      const ctx = setup(undefined, { backoffSeconds, brokenAfter: 1_000 });
      await ctx.get();
      for (let t = 0; t < seconds; t++) {
        ctx.clock.advance(1);
        for (let i = 0; i < perSecond; i++) await ctx.get();
        await ctx.work();
      }
      return ctx.counter.calls - 1; // the first, good render does not count
    }
    const hour = 3_600;
    const light = await rendersUnder(1, hour, 15);
    const heavy = await rendersUnder(20, hour, 15);
    expect(heavy).toBe(light);
    // attempts at 15 * (2^k - 1) s after the first failure, plus that first one: log2(t/15) + 1
    expect(light).toBe(Math.floor(Math.log2(hour / 15 + 1)) + 1);
    expect(await rendersUnder(1, 4 * hour, 15)).toBe(light + 2);
    // negative control: without the backoff, every dedupe window of stale traffic renders again
    expect(await rendersUnder(1, hour, 0)).toBeGreaterThan(100);
  }, 60_000);
  /** A page failing on every regeneration, requested once a day for 30 days. @returns the days its META's TTL had passed */
  async function daysPastTtl(without: Without = {}) {
    const ctx = setup(undefined, { backoffSeconds: 15, brokenAfter: 3 }, without);
    await ctx.get();
    const lapsed: number[] = [];
    for (let day = 1; day <= 30; day++) {
      ctx.clock.advance(86_400);
      await ctx.get();
      await ctx.work();
      const meta = await ctx.meta();
      if (meta?.ttl === undefined || meta.ttl <= ctx.clock.seconds) lapsed.push(day);
    }
    return { lapsed, renders: ctx.counter.calls, versions: (await ctx.meta())?.versionSks };
  }

  it('keeps its rows while it is requested: every attempt moves META’s TTL on, broken or not', async () => {
    const { lapsed, renders, versions } = await daysPastTtl();
    expect(lapsed).toEqual([]);
    expect(versions).toHaveLength(1); // its history, for a rollback
    // broken after 3 failures, then one attempt each half of its retention: a handful, not 30
    expect(renders).toBeLessThanOrEqual(1 + 3 + 30 / 3.5 + 1);
  });

  it('negative control: without the TTL extension of a failure record, META lapses while requested', async () => {
    expect((await daysPastTtl({ ttlExtension: true })).lapsed.length).toBeGreaterThan(0);
  });

  it('negative control: a broken page never attempted again lapses while requested', async () => {
    expect((await daysPastTtl({ ttlRead: true })).lapsed.length).toBeGreaterThan(0);
  });
});
