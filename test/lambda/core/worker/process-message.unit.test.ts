import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { MemoryTable } from '../../../../lambda/adapters/shared/memory-table.js';
import { compilePathPatterns } from '../../../../lambda/core/path-patterns.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';
import { intentFor, message } from '../../../helpers/worker-harness.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';

function setup(page: PageFunction = () => htmlPage('page', { revalidateSeconds: 60 })) {
  const counter = countingRenderer(page);
  const service = memoryService({ renderer: counter.renderer });
  const deliver = (id: string, body: string, receiveCount = 1) =>
    processMessage(service.workerDeps, message(id, body, receiveCount));
  const request = (path: string, id: string) =>
    service.state.requests.get(MemoryTable.requestId(service.keyFor(path).pk, id));
  /** Another delivery's claim on message `id`, with `remainingMs` left in its invocation. */
  const claim = (path: string, id: string, remainingMs: number) => {
    service.requests.configure({ config: service.workerDeps.idempotency.config });
    return service.requests.saveInProgress(
      {
        pk: service.keyFor(path).pk,
        key: id,
        request: { tenant: null, cacheKey: path, deployId: 'd1' },
      },
      remainingMs,
    );
  };
  return { ...service, counter, deliver, request, claim };
}

describe('processMessage (unit, in-memory ports)', () => {
  describe('poison messages go to the DLQ on their first receive, with their reason', () => {
    it.each([
      ['not JSON', '{"v":1,"path":', 'invalid-message'],
      ['the wrong shape', JSON.stringify({ v: 2, path: '/a' }), 'invalid-message'],
      [
        'a key the origin would refuse',
        intentFor('/a/../../etc/passwd'),
        'invalid-cache-key:traversal',
      ],
    ])('%s', async (_label, body, code) => {
      const ctx = setup();
      const report = await ctx.deliver('m1', body);
      expect(report).toMatchObject({ decision: 'poison', action: 'dead-letter', reason: { code } });
      expect(ctx.counter.calls).toBe(0);
    });
  });

  it('dead-letters an intent for a path outside the render allow-list', async () => {
    const ctx = setup();
    const deps = {
      ...ctx.workerDeps,
      keyPolicy: { allowedQueryParams: [], renderable: compilePathPatterns(['/blog/*']) },
    };
    const report = await processMessage(deps, message('m1', intentFor('/admin')));
    expect(report).toMatchObject({
      action: 'dead-letter',
      reason: { code: 'invalid-cache-key:path-not-renderable' },
    });
    expect(ctx.counter.calls).toBe(0);
  });

  it('acknowledges an intent a fresh META already answers, without a claim or a lease', async () => {
    const ctx = setup();
    await ctx.deliver('m1', intentFor('/a'));
    const report = await ctx.deliver('m2', intentFor('/a'));
    expect(report).toMatchObject({ decision: 'fresh', action: 'ack' });
    expect(ctx.request('/a', 'm2')).toBeUndefined();
    expect(ctx.counter.calls).toBe(1);
  });

  it('reads META strongly consistent, so an intent after a revalidation is not taken for answered', async () => {
    const ctx = setup();
    await ctx.deliver('m1', intentFor('/a'));
    const pk = ctx.keyFor('/a').pk;
    const beforeMark = await ctx.cacheTable.getMeta(pk);
    await ctx.marks.markStale(pk, { effectId: 'rv_1', now: ctx.clock.seconds });
    // A replica that has not seen the mark yet answers eventually consistent reads.
    const lagging = {
      ...ctx.workerDeps,
      cacheTable: Object.assign(Object.create(ctx.cacheTable) as typeof ctx.cacheTable, {
        getMeta: (key: string, options?: { consistent?: boolean }) =>
          options?.consistent === true ? ctx.cacheTable.getMeta(key) : Promise.resolve(beforeMark),
      }),
    };
    const explicit = await processMessage(lagging, message('m2', intentFor('/a')));
    expect(explicit).toMatchObject({ decision: 'new', action: 'ack' });
    expect(ctx.counter.calls).toBe(2);
  });

  it('publishes a new generation and seals its REQ# row in the same publish', async () => {
    const ctx = setup();
    const report = await ctx.deliver('m1', intentFor('/a'));
    const meta = await ctx.cacheTable.getMeta(ctx.keyFor('/a').pk);
    expect(report).toMatchObject({
      decision: 'new',
      action: 'ack',
      detail: { s3Key: meta?.s3Key },
    });
    expect(ctx.request('/a', 'm1')).toMatchObject({
      status: 'COMPLETED',
      ending: { decision: 'new', s3Key: meta?.s3Key, generatedAt: meta?.generatedAt },
      lockedBy: 'unit-worker/request-1',
    });
  });

  it('answers a redelivery with the recorded result and renders once', async () => {
    const ctx = setup();
    await ctx.deliver('m1', intentFor('/a'));
    ctx.clock.advance(61); // stale again: only REQ# can tell it is the same intent
    const replay = await ctx.deliver('m1', intentFor('/a'), 2);
    expect(replay).toMatchObject({
      decision: 'duplicate',
      action: 'ack',
      detail: { recorded: 'new' },
    });
    expect(ctx.counter.calls).toBe(1);
  });

  it('refuses the same message ID with another request, and applies nothing', async () => {
    const ctx = setup();
    await ctx.deliver('m1', intentFor('/a'));
    const metaBefore = await ctx.cacheTable.getMeta(ctx.keyFor('/a').pk);
    ctx.clock.advance(61);
    const report = await ctx.deliver('m1', intentFor('/a', { deployId: 'd2' }), 2);
    expect(report).toMatchObject({
      decision: 'conflict',
      action: 'dead-letter',
      reason: { code: 'idempotency-conflict' },
    });
    expect(await ctx.cacheTable.getMeta(ctx.keyFor('/a').pk)).toEqual(metaBefore);
    expect(ctx.counter.calls).toBe(1);
  });

  it('retries an intent another delivery is still working on (its claim is live)', async () => {
    const ctx = setup();
    await ctx.claim('/a', 'm1', 60_000);
    expect(await ctx.deliver('m1', intentFor('/a'), 2)).toMatchObject({
      decision: 'in-progress',
      action: 'retry',
    });
  });

  it('takes over a claim whose invocation ran out of time, and finishes the intent', async () => {
    const ctx = setup();
    await ctx.claim('/a', 'm1', 1_000);
    ctx.clock.advance(2);
    expect(await ctx.deliver('m1', intentFor('/a'), 2)).toMatchObject({ decision: 'new' });
  });

  it('acknowledges an intent whose key another holder is regenerating', async () => {
    const ctx = setup();
    await ctx.cacheTable.acquireLease({
      pk: ctx.keyFor('/a').pk,
      now: ctx.clock.seconds,
      durationSeconds: 30,
    });
    expect(await ctx.deliver('m1', intentFor('/a'))).toMatchObject({
      decision: 'lease-held',
      action: 'ack',
    });
    expect(ctx.request('/a', 'm1')?.status).toBe('COMPLETED');
  });

  describe('a refused page', () => {
    it.each([
      ['a 403', () => htmlPage('no', { status: 403 }), 'refused:status'],
      [
        'a page marked no-store',
        () => ({ ...htmlPage('mine'), headers: { 'cache-control': 'no-store' } }),
        'refused:uncacheable',
      ],
    ])(
      '(%s) is dead-lettered on its first receive, rendered once, its REQ# FAILED with the reason',
      async (_label, page, code) => {
        const ctx = setup(page);
        const report = await ctx.deliver('m1', intentFor('/a'));
        expect(report).toMatchObject({
          decision: 'refused',
          action: 'dead-letter',
          reason: { code },
        });
        expect(ctx.counter.calls).toBe(1);
        expect(ctx.request('/a', 'm1')).toMatchObject({
          status: 'FAILED',
          ending: { error: { code } },
        });
        // a redelivery (the DLQ send failed, say) gets the same answer without a render
        const again = await ctx.deliver('m1', intentFor('/a'), 2);
        expect(again).toMatchObject({ action: 'ack', decision: 'duplicate' });
        expect(ctx.counter.calls).toBe(1);
      },
    );
  });

  describe('a retryable failure', () => {
    const down: PageFunction = () => htmlPage('down', { status: 503 });

    it('is retried, and its claim released so the retry can take it', async () => {
      const ctx = setup(down);
      expect(await ctx.deliver('m1', intentFor('/a'))).toMatchObject({
        decision: 'retry',
        action: 'retry',
      });
      expect(ctx.request('/a', 'm1')).toBeUndefined();
      expect(await ctx.deliver('m1', intentFor('/a'), 2)).toMatchObject({ action: 'retry' });
      expect(ctx.counter.calls).toBe(2);
    });

    it('is dead-lettered with its cause once the receive budget is spent', async () => {
      const ctx = setup(down);
      const report = await ctx.deliver('m1', intentFor('/a'), 5);
      expect(report).toMatchObject({
        action: 'dead-letter',
        reason: {
          code: 'retries-exhausted',
          message: expect.stringMatching(/renderer answered 503/) as unknown as string,
        },
      });
      // Never left STARTED: the row says FAILED, with the reason, for the sweeper and people.
      expect(ctx.request('/a', 'm1')).toMatchObject({
        status: 'FAILED',
        ending: { error: { code: 'retries-exhausted' } },
      });
    });
  });
});
