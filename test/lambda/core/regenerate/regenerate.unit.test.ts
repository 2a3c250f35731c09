import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import {
  RefusalReason,
  RenderRefusedError,
  RenderRetryableError,
  TransactionConflictError,
} from '../../../../lambda/core/errors.js';
import type { Need } from '../../../../lambda/core/page/freshness.js';
import type { RenderRequest } from '../../../../lambda/core/regenerate/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import type { RegenerateDeps } from '../../../../lambda/core/regenerate/deps.js';
import { bodyKeyOf } from '../../../../lambda/core/page/rows.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { withOverrides } from '../../../helpers/overrides.js';
import { countingRenderer, untilAborted, type PageFunction } from '../../../helpers/renderers.js';

/** One page, its fakes, and `run()` regenerating it as an intent that saw nothing. */
function setup(page: PageFunction, overrides: Partial<RegenerateDeps> = {}) {
  const counter = countingRenderer(page);
  const service = memoryService({ renderer: counter.renderer });
  const deps: RegenerateDeps = { ...service.regenerateDeps, ...overrides };
  const cacheKey = service.keyFor('/page');
  const run = (d: RegenerateDeps = deps, need: Need = { kind: 'intent' }) =>
    regenerate(d, { cacheKey, need, owner: 'unit' });
  const meta = () => service.cacheTable.getMeta(cacheKey.pk);
  const locked = () => service.state.locks.has(cacheKey.pk);
  const objects = () => [...service.bodies.objects.keys()];
  return { ...service, counter, deps, cacheKey, run, meta, locked, objects };
}

type Ctx = ReturnType<typeof setup>;

/** A good first page, then the page under test after it went stale. */
async function afterGoodPage(ctx: Ctx) {
  await ctx.run();
  const before = await ctx.meta();
  ctx.clock.advance(61);
  return before;
}

const failing =
  (failure: PageFunction): PageFunction =>
  (request, call) =>
    call === 1 ? htmlPage('good page') : failure(request, call);

describe('regenerate (unit, in-memory ports)', () => {
  it('publishes a render under a body key named after its lease and releases the lease', async () => {
    const ctx = setup(() => htmlPage('<p>hello</p>', { revalidateSeconds: 30 }));
    const outcome = await ctx.run();
    expect(outcome.decision).toBe('new');
    const meta = await ctx.meta();
    expect(meta).toMatchObject({
      generatedAt: ctx.clock.seconds,
      revalidateSeconds: 30,
      statusCode: 200,
      cacheKey: '/page',
      contentType: 'text/html; charset=utf-8',
    });
    expect(meta?.s3Key).toMatch(new RegExp(`^pages/_/${ctx.cacheKey.hash}/[0-9a-f-]{36}$`));
    expect(ctx.bodies.text(meta?.s3Key ?? '')).toBe('<p>hello</p>');
    expect(ctx.locked()).toBe(false);
  });

  it.each([
    [200, 7 * 86_400],
    [301, 7 * 86_400],
    [404, 3_600],
    [410, 3_600],
  ])(
    'lets DynamoDB TTL collect a %i page nobody asks for, %i s after it goes stale',
    async (status, after) => {
      const ctx = setup(() => htmlPage('page', { status, revalidateSeconds: 30 }));
      await ctx.run();
      expect((await ctx.meta())?.ttl).toBe(ctx.clock.seconds + 30 + after);
    },
  );

  it('writes bodies under the configured prefix', async () => {
    const ctx = setup(() => htmlPage('page'), { bodyKeyPrefix: 'isr/' });
    await ctx.run();
    expect((await ctx.meta())?.s3Key).toMatch(new RegExp(`^isr/_/${ctx.cacheKey.hash}/`));
  });

  it('keeps the body it replaced: the page live until now is a kept version', async () => {
    const ctx = setup((_request, call) => htmlPage(`v${call}`));
    const first = await afterGoodPage(ctx);
    await ctx.run();
    const second = await ctx.meta();
    expect(second?.versionSks).toEqual([second?.currentSk, first?.currentSk]);
    expect(ctx.bodies.text(first?.s3Key ?? '')).toBe('v1');
    expect(ctx.bodies.isRetired(first?.s3Key ?? '')).toBe(false);
  });

  it('drops the oldest kept version past keepVersions, row and body, never the live one', async () => {
    const ctx = setup((_request, call) => htmlPage(`v${call}`, { revalidateSeconds: 1 }), {
      keepVersions: 3,
    });
    const metas = [];
    for (let i = 0; i < 5; i++) {
      await ctx.run();
      metas.push(await ctx.meta());
      ctx.clock.advance(2);
    }
    const live = metas[4];
    expect(live?.versionSks).toEqual(
      metas
        .slice(2)
        .reverse()
        .map((meta) => meta?.currentSk),
    );
    for (const dropped of metas.slice(0, 2)) {
      expect(ctx.bodies.isRetired(dropped?.s3Key ?? '')).toBe(true);
      expect(await ctx.history.version(ctx.cacheKey.pk, dropped?.currentSk ?? '')).toBeUndefined();
    }
    for (const kept of metas.slice(2)) expect(ctx.bodies.isRetired(kept?.s3Key ?? '')).toBe(false);
  });

  it('always keeps the version live until now, even after a rollback made an old one live', async () => {
    const ctx = setup((_request, call) => htmlPage(`v${call}`, { revalidateSeconds: 1 }), {
      keepVersions: 2,
    });
    await ctx.run();
    const first = await ctx.meta();
    ctx.clock.advance(2);
    await ctx.run();
    const second = await ctx.meta();
    // An operator moved META back to the first version (what `rollback` writes).
    ctx.state.metas.set(ctx.cacheKey.pk, {
      ...(first as NonNullable<typeof first>),
      versionSks: second?.versionSks,
      generatedAt: ctx.clock.seconds,
      revalidateSeconds: 1,
    });
    ctx.clock.advance(2);
    await ctx.run();
    const third = await ctx.meta();
    expect(third?.versionSks).toEqual([third?.currentSk, first?.currentSk]);
    expect(ctx.bodies.isRetired(second?.s3Key ?? '')).toBe(true);
    expect(ctx.bodies.text(first?.s3Key ?? '')).toBe('v1');
  });

  describe('skips the render when META already answers the need, once the lease is held', () => {
    it('a fresh page answers an intent', async () => {
      const ctx = setup(() => htmlPage('page'));
      await ctx.run();
      expect((await ctx.run()).decision).toBe('fresh');
      expect(ctx.counter.calls).toBe(1);
      expect(ctx.locked()).toBe(false);
    });

    it('a generation newer than the one the intent saw answers it, even when stale', async () => {
      const ctx = setup(() => htmlPage('page'));
      const before = await afterGoodPage(ctx);
      const need: Need = { kind: 'intent', observedGeneratedAt: (before?.generatedAt ?? 0) - 1 };
      expect((await ctx.run(ctx.deps, need)).decision).toBe('fresh');
      expect((await ctx.run(ctx.deps, { kind: 'intent' })).decision).toBe('new');
    });

    it('a waiting viewer is answered by any generation but a broken one', async () => {
      const ctx = setup(() => htmlPage('page'));
      const before = await afterGoodPage(ctx);
      expect((await ctx.run(ctx.deps, { kind: 'page' })).decision).toBe('fresh');
      const broken: Need = { kind: 'page', brokenBodyKey: before?.s3Key };
      expect((await ctx.run(ctx.deps, broken)).decision).toBe('new');
    });
  });

  it('leaves the render to a live lease holder', async () => {
    const ctx = setup(() => htmlPage('page'));
    await ctx.cacheTable.acquireLease({
      pk: ctx.cacheKey.pk,
      now: ctx.clock.seconds,
      durationSeconds: 30,
    });
    expect(await ctx.run()).toMatchObject({ decision: 'lease-held' });
    expect(ctx.counter.calls).toBe(0);
  });

  describe('keeps the last good page and releases the lease when the render fails', () => {
    it.each([
      ['a 5xx answer', () => htmlPage('oops', { status: 503 })],
      ['a 429 answer', () => htmlPage('slow down', { status: 429 })],
      ['a thrown error', () => Promise.reject(new Error('template crashed'))],
    ])('%s is retryable', async (_label, failure) => {
      const ctx = setup(failing(failure));
      const before = await afterGoodPage(ctx);
      await expect(ctx.run()).rejects.toBeInstanceOf(RenderRetryableError);
      expect(await ctx.meta()).toEqual(before);
      expect(ctx.objects()).toEqual([before?.s3Key]);
      expect(ctx.locked()).toBe(false);
    });

    it('a render that outlives its timeout is aborted and retryable', async () => {
      let aborted = false;
      let ctx: Ctx | undefined = undefined;
      ctx = setup(
        failing(async (request: RenderRequest) => {
          request.signal.addEventListener('abort', () => (aborted = true));
          const hung = untilAborted(request.signal);
          ctx?.clock.advanceMs(49); // not yet
          expect(aborted).toBe(false);
          ctx?.clock.advanceMs(1); // the timeout's 50 ms are up
          return hung;
        }),
        { renderTimeoutMs: 50 },
      );
      await afterGoodPage(ctx);
      await expect(ctx.run()).rejects.toThrow(/render timed out after 50 ms/);
      expect(aborted).toBe(true);
      expect(ctx.locked()).toBe(false);
    });

    it.each([
      ['a 403', () => htmlPage('no', { status: 403 }), RefusalReason.Status],
      [
        'a 200 marked private',
        () => ({ ...htmlPage('mine'), headers: { 'cache-control': 'private, max-age=60' } }),
        RefusalReason.Uncacheable,
      ],
      [
        'a 302 to /login marked no-store',
        () => ({
          ...htmlPage('', { status: 302 }),
          location: '/login',
          headers: { 'cache-control': 'private, no-store' },
        }),
        RefusalReason.Uncacheable,
      ],
      ['an oversized page', () => htmlPage('x'.repeat(2048)), RefusalReason.TooLarge],
    ])('%s is refused for good (terminal), nothing written', async (_label, failure, reason) => {
      const ctx = setup(failing(failure), { maxBodyBytes: 1024 });
      const before = await afterGoodPage(ctx);
      const error = await ctx.run().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RenderRefusedError);
      expect((error as RenderRefusedError).reason).toBe(reason);
      expect(await ctx.meta()).toEqual(before);
      expect(ctx.objects()).toEqual([before?.s3Key]);
      expect(ctx.locked()).toBe(false);
    });
  });

  describe('a lease that is not live enough to render under', () => {
    async function pausedAfterAcquire(pauseSeconds: number, margin: number) {
      // A paused process refreshes nothing during its pause: the keeper is not due.
      const ctx = setup(() => htmlPage('page'), {
        clockSkewMarginSeconds: margin,
        leaseRefreshMs: 3_600_000,
      });
      const pausing = withOverrides(ctx.cacheTable, {
        getMeta: async (pk) => {
          const meta = await ctx.cacheTable.getMeta(pk);
          ctx.clock.advance(pauseSeconds);
          return meta;
        },
      });
      const outcome = await ctx.run({ ...ctx.deps, cacheTable: pausing });
      return { outcome, renders: ctx.counter.calls };
    }

    it('does not render once less than the clock-skew margin is left', async () => {
      expect(await pausedAfterAcquire(26, 5)).toEqual({
        outcome: { decision: 'lease-lost' },
        renders: 0,
      });
      expect((await pausedAfterAcquire(24, 5)).renders).toBe(1);
    });

    it('negative control: without the margin check it renders under a dead lease', async () => {
      const { outcome, renders } = await pausedAfterAcquire(31, -Infinity);
      expect(renders).toBe(1);
      expect(outcome.decision).toBe('lease-lost'); // its publish is refused by the token/expiry
    });
  });

  it('stops the render as soon as a refresh finds the lease taken over', async () => {
    let aborted = false;
    const ctx = setup(() => htmlPage('unused'), { leaseRefreshMs: 20 });
    const deps = {
      ...ctx.deps,
      renderer: countingRenderer(async (request) => {
        request.signal.addEventListener('abort', () => (aborted = true));
        ctx.clock.advance(31);
        await ctx.cacheTable.acquireLease({
          pk: ctx.cacheKey.pk,
          now: ctx.clock.seconds,
          durationSeconds: 30,
        });
        return untilAborted(request.signal);
      }).renderer,
    };
    expect((await ctx.run(deps)).decision).toBe('lease-lost');
    expect(aborted).toBe(true);
    expect(ctx.objects()).toEqual([]);
  });

  describe('the publish', () => {
    it('is retried when cancelled by a transaction conflict', async () => {
      const ctx = setup(() => htmlPage('page'));
      let calls = 0;
      const conflicting = withOverrides(ctx.cacheTable, {
        publishGeneration: (input) =>
          ++calls === 1
            ? Promise.reject(new TransactionConflictError('conflict'))
            : ctx.cacheTable.publishGeneration(input),
      });
      const run = ctx.run({ ...ctx.deps, cacheTable: conflicting });
      expect((await ctx.clock.runUntil(run)).decision).toBe('new');
      expect(calls).toBe(2);
      // One jittered backoff on the clock between the two attempts: 40 ms, up to twice that.
      const backoff = ctx.clock.slept.filter((ms) => ms < 1_000);
      expect(backoff).toHaveLength(1);
      expect(backoff[0]).toBeGreaterThanOrEqual(40);
      expect(backoff[0]).toBeLessThan(80);
    });

    it('refused because another worker published meanwhile: lease-lost, its body deleted', async () => {
      // A 31 s render: the lease runs out, not the render's time.
      const ctx = setup(() => htmlPage('stale render'), {
        leaseRefreshMs: 60_000,
        renderTimeoutMs: 60_000,
      });
      const deps = {
        ...ctx.deps,
        renderer: countingRenderer(async () => {
          ctx.clock.advance(31);
          const other = {
            ...ctx.deps,
            renderer: countingRenderer(() => htmlPage('other')).renderer,
          };
          await regenerate(other, { cacheKey: ctx.cacheKey, need: { kind: 'intent' } });
          return htmlPage('stale render');
        }).renderer,
      };
      expect((await ctx.run(deps)).decision).toBe('lease-lost');
      const live = (await ctx.meta())?.s3Key ?? '';
      expect(ctx.bodies.text(live)).toBe('other');
      expect(ctx.objects()).toEqual([live]);
    });

    it('whose answer was lost after it committed: new, its body kept', async () => {
      const ctx = setup(() => htmlPage('committed'));
      const lossy = withOverrides(ctx.cacheTable, {
        // the SDK retries a lost answer: the retry finds LOCK gone
        publishGeneration: async (input) => {
          await ctx.cacheTable.publishGeneration(input);
          return ctx.cacheTable.publishGeneration(input);
        },
      });
      expect((await ctx.run({ ...ctx.deps, cacheTable: lossy })).decision).toBe('new');
      expect(ctx.bodies.text((await ctx.meta())?.s3Key ?? '')).toBe('committed');
    });

    it('refused by a newer generation: superseded, body deleted, lease released', async () => {
      const ctx = setup(() => htmlPage('older'));
      const newer = withOverrides(ctx.cacheTable, {
        publishGeneration: (input) =>
          ctx.cacheTable.publishGeneration({
            ...input,
            meta: { ...input.meta, generatedAt: 0 }, // older than what META holds
          }),
      });
      await ctx.run();
      ctx.clock.advance(61);
      expect(await ctx.run({ ...ctx.deps, cacheTable: newer })).toMatchObject({
        decision: 'superseded',
      });
      expect(ctx.objects()).toHaveLength(1);
      expect(ctx.locked()).toBe(false);
    });

    it('refused because another delivery sealed the intent: duplicate, body deleted', async () => {
      const ctx = setup(() => htmlPage('page'));
      const outcome = await regenerate(ctx.deps, {
        cacheKey: ctx.cacheKey,
        need: { kind: 'intent' },
        seal: { idempotencyKey: 'never-claimed', ttl: 0 },
      });
      expect(outcome.decision).toBe('duplicate');
      expect(ctx.objects()).toEqual([]);
      expect(ctx.locked()).toBe(false);
    });

    it('failing with an unknown error: the release proves nothing committed, so the body goes', async () => {
      const ctx = setup(() => htmlPage('never published'));
      const broken = withOverrides(ctx.cacheTable, {
        publishGeneration: () => Promise.reject(new Error('ValidationException')),
      });
      await expect(ctx.run({ ...ctx.deps, cacheTable: broken })).rejects.toThrow(
        'ValidationException',
      );
      expect(ctx.objects()).toEqual([]);
      expect(ctx.locked()).toBe(false);
    });

    it('failing after it committed: LOCK is gone, so the body is kept', async () => {
      const ctx = setup(() => htmlPage('committed'));
      const lossy = withOverrides(ctx.cacheTable, {
        publishGeneration: async (input) => {
          await ctx.cacheTable.publishGeneration(input);
          throw new Error('socket hang up');
        },
      });
      await expect(ctx.run({ ...ctx.deps, cacheTable: lossy })).rejects.toThrow('socket hang up');
      expect(ctx.bodies.text((await ctx.meta())?.s3Key ?? '')).toBe('committed');
    });
  });

  describe('bodies nobody will reference', () => {
    it('are left to the sweeper when the caller may not delete (the origin has no s3:DeleteObject)', async () => {
      const ctx = setup(() => htmlPage('never published'));
      const noDelete = withOverrides(ctx.bodies, {
        deleteBody: () => Promise.reject(new Error('AccessDenied')),
      });
      const broken = withOverrides(ctx.cacheTable, {
        publishGeneration: () => Promise.reject(new Error('ValidationException')),
      });
      await expect(
        ctx.run({ ...ctx.deps, bodies: noDelete, cacheTable: broken }),
      ).rejects.toThrow();
      const [orphan = ''] = ctx.objects();
      expect(ctx.bodies.text(orphan)).toBe('never published');
      expect(ctx.warnings).toContain('could not delete an unreferenced body; the sweeper will');
    });

    it('left by a crashed holder are retired by whoever takes its expired lease over', async () => {
      const ctx = setup((_request, call) => htmlPage(`render ${call}`));
      const crashed = await ctx.cacheTable.acquireLease({
        pk: ctx.cacheKey.pk,
        now: ctx.clock.seconds,
        durationSeconds: 30,
      });
      const abandoned = bodyKeyOf(ctx.cacheKey, crashed.token);
      await ctx.bodies.putBody({
        s3Key: abandoned,
        body: new Uint8Array([1]),
        contentType: 'text/html',
      });
      ctx.clock.advance(31);
      expect((await ctx.run()).decision).toBe('new');
      expect(ctx.bodies.isRetired(abandoned)).toBe(true);
      expect(ctx.bodies.isRetired((await ctx.meta())?.s3Key ?? '')).toBe(false);
    });

    it('take-over of a holder that wrote nothing: nothing to retire, no warning', async () => {
      const ctx = setup(() => htmlPage('page'));
      await ctx.cacheTable.acquireLease({
        pk: ctx.cacheKey.pk,
        now: ctx.clock.seconds,
        durationSeconds: 30,
      });
      ctx.clock.advance(31);
      expect((await ctx.run()).decision).toBe('new');
      expect(ctx.warnings).toEqual([]);
    });
  });
});
