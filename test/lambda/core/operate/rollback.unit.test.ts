import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { cdnKeyTagOf } from '../../../../lambda/core/page/cache-tags.js';
import { PageChangedError, VersionRequestError } from '../../../../lambda/core/errors.js';
import type { CacheMeta } from '../../../../lambda/core/page/model.js';
import type { CdnPurge } from '../../../../lambda/core/page/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import {
  hold,
  MAX_HOLD_SECONDS,
  release,
  resolveVersion,
  rollback,
  type PageOpsDeps,
} from '../../../../lambda/core/operate/rollback.js';
import { versionIdOf } from '../../../../lambda/core/page/rows.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import { encodeIntent } from '../../../../lambda/core/page/intent.js';
import { shiftedClock } from '../../../helpers/clock.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { withOverrides } from '../../../helpers/overrides.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';

/** A page published `versions` times (v1, v2, ...), each with its own tag, and the ops deps. */
async function setup(versions = 3, page?: PageFunction) {
  const counter = countingRenderer(
    page ??
      ((_r, call) => ({ ...htmlPage(`v${call}`, { revalidateSeconds: 10 }), tags: [`t${call}`] })),
  );
  const service = memoryService({ renderer: counter.renderer });
  const cacheKey = service.keyFor('/hello');
  const metas: CacheMeta[] = [];
  const publish = async () => {
    await regenerate(service.regenerateDeps, { cacheKey, need: { kind: 'intent' } });
    const meta = await service.cacheTable.getMeta(cacheKey.pk);
    if (meta !== undefined) metas.push(meta);
    service.clock.advance(11);
  };
  for (let i = 0; i < versions; i++) await publish();
  const purges: string[][] = [];
  const deps: PageOpsDeps = {
    cacheTable: service.cacheTable,
    history: service.history,
    bodies: service.bodies,
    tagIndex: service.tagIndex,
    clock: service.clock,
    leaseSeconds: 30,
    cdn: {
      invalidateTags: (tags: readonly string[]): Promise<CdnPurge> => {
        purges.push([...tags]);
        return Promise.resolve({ status: 'submitted', invalidationIds: ['I1'] });
      },
    },
  };
  const meta = () => service.cacheTable.getMeta(cacheKey.pk);
  const get = () =>
    servePage(service.originDeps, {
      method: 'GET',
      rawPath: '/hello',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    });
  const text = (body: Uint8Array | undefined) => new TextDecoder().decode(body);
  return { ...service, counter, cacheKey, metas, publish, purges, deps, meta, get, text };
}

describe('rollback (unit, in-memory ports)', () => {
  it('makes the version before the live one live, serves its body at once, and purges the CDN', async () => {
    const ctx = await setup(3);
    const [, v2, v3] = ctx.metas;
    const result = await rollback(ctx.deps, { cacheKey: ctx.cacheKey, actor: 'alice' });
    expect(result).toMatchObject({ decision: 'rolled-back', from: v3.currentSk, to: v2.currentSk });
    const meta = await ctx.meta();
    expect(meta).toMatchObject({
      s3Key: v2.s3Key,
      etag: v2.etag,
      currentSk: v2.currentSk,
      versionSks: v3.versionSks,
      tags: ['t2'],
      rolledBack: { fromSk: v3.currentSk, at: ctx.clock.seconds, by: 'alice' },
    });
    // Freshness restarts and Last-Modified moves forward (never a 304 for the replaced page).
    expect(meta?.generatedAt).toBe(ctx.clock.seconds);
    const reply = await ctx.get();
    expect(reply).toMatchObject({ status: 200, cacheStatus: 'HIT' });
    expect(ctx.text(reply.body)).toBe('v2');
    expect(ctx.purges).toEqual([[cdnKeyTagOf(ctx.cacheKey)]]);
  });

  it('keeps generated_at moving forward even when the operator’s clock is behind', async () => {
    const ctx = await setup(2);
    const live = await ctx.meta();
    const behind = {
      ...ctx.deps,
      clock: shiftedClock(ctx.deps.clock, (live!.generatedAt - 60) * 1000 - ctx.deps.clock.now()),
    };
    await rollback(behind, { cacheKey: ctx.cacheKey, actor: 'a' });
    expect((await ctx.meta())?.generatedAt).toBe(live!.generatedAt + 1);
  });

  it('goes to a named version by id or unique prefix, and moves the tag index with it', async () => {
    const ctx = await setup(3);
    const [v1] = ctx.metas;
    const id = versionIdOf(v1.currentSk ?? '');
    await rollback(ctx.deps, { cacheKey: ctx.cacheKey, to: id.slice(0, 16), actor: 'a' });
    expect((await ctx.meta())?.s3Key).toBe(v1.s3Key);
    expect(ctx.state.tagPages.get('TAG#_#t1')?.has(ctx.cacheKey.pk)).toBe(true);
    expect(ctx.state.tagPages.get('TAG#_#t3')?.has(ctx.cacheKey.pk) ?? false).toBe(false);
  });

  it.each([
    ['a version that is not kept', 'nope', 'version-not-kept'],
    ['a prefix several versions share', '', 'ambiguous-version'],
  ])('refuses %s and writes nothing', async (_what, to, code) => {
    const ctx = await setup(3);
    const before = await ctx.meta();
    await expect(
      rollback(ctx.deps, { cacheKey: ctx.cacheKey, to, actor: 'a' }),
    ).rejects.toMatchObject({
      code,
    });
    expect(await ctx.meta()).toEqual(before);
    expect(ctx.state.locks.has(ctx.cacheKey.pk)).toBe(false);
  });

  it('refuses with a reason when there is nothing to go back to', async () => {
    const one = await setup(1);
    await expect(rollback(one.deps, { cacheKey: one.cacheKey, actor: 'a' })).rejects.toMatchObject({
      code: 'nothing-older',
    });
    const live = await one.meta();
    await expect(
      rollback(one.deps, {
        cacheKey: one.cacheKey,
        to: versionIdOf(live?.currentSk ?? ''),
        actor: 'a',
      }),
    ).rejects.toMatchObject({ code: 'already-live' });
    const none = await setup(0);
    await expect(
      rollback(none.deps, { cacheKey: none.cacheKey, actor: 'a' }),
    ).rejects.toMatchObject({
      code: 'page-not-found',
    });
    // A META another writer published (Recipe A, no versions).
    none.state.metas.set(none.cacheKey.pk, {
      pk: none.cacheKey.pk,
      s3Key: 'x',
      generatedAt: 1,
      revalidateSeconds: 1,
    });
    await expect(
      rollback(none.deps, { cacheKey: none.cacheKey, actor: 'a' }),
    ).rejects.toMatchObject({
      code: 'no-versions',
    });
  });

  it('after an expire revalidation, goes back no further than it, and says why (issue 19, item 20)', async () => {
    const ctx = await setup(2);
    await ctx.marks.expire(ctx.cacheKey.pk); // a takedown: `revalidate --mode expire`
    await ctx.publish(); // the next request renders
    const refusal = rollback(ctx.deps, { cacheKey: ctx.cacheKey, actor: 'a' });
    await expect(refusal).rejects.toMatchObject({ code: 'nothing-older' });
    await expect(refusal).rejects.toThrow(/again after an `expire` revalidation/);
    await ctx.publish();
    expect((await rollback(ctx.deps, { cacheKey: ctx.cacheKey, actor: 'a' })).to).toBe(
      ctx.metas[2]?.currentSk,
    );
  });

  it('refuses, writing nothing, when the version’s body is missing', async () => {
    const ctx = await setup(2);
    await ctx.bodies.deleteBody(ctx.metas[0].s3Key);
    const before = await ctx.meta();
    await expect(rollback(ctx.deps, { cacheKey: ctx.cacheKey, actor: 'a' })).rejects.toMatchObject({
      code: 'version-body-missing',
    });
    expect(await ctx.meta()).toEqual(before);
  });

  it('is checked against the META it read: a publish in between refuses it, nothing written, lease released', async () => {
    const ctx = await setup(2);
    const racing = withOverrides(ctx.history, {
      version: async (pk: string, sk: string) => {
        const found = await ctx.history.version(pk, sk);
        await ctx.publish(); // a regeneration publishes v3 after the operator's read
        return found;
      },
    });
    await expect(
      rollback({ ...ctx.deps, history: racing }, { cacheKey: ctx.cacheKey, actor: 'a' }),
    ).rejects.toBeInstanceOf(PageChangedError);
    expect(ctx.text((await ctx.get()).body)).toBe('v3');
    expect(ctx.state.locks.has(ctx.cacheKey.pk)).toBe(false);
    expect(ctx.purges).toEqual([]);
  });

  it('seizes the lease from a render in flight, whose publish then fails: it cannot undo the rollback', async () => {
    let rolledBack: Promise<unknown> = Promise.resolve();
    const ctx = await setup(2, (_r, call) => {
      // the third render is in flight when the operator rolls back
      if (call === 3) rolledBack = rollback(ctx.deps, { cacheKey: ctx.cacheKey, actor: 'a' });
      return htmlPage(`v${call}`, { revalidateSeconds: 10 });
    });
    const outcome = await regenerate(ctx.regenerateDeps, {
      cacheKey: ctx.cacheKey,
      need: { kind: 'intent' },
    });
    await rolledBack;
    expect(outcome.decision).toBe('lease-lost');
    expect(ctx.text((await ctx.get()).body)).toBe('v1');
    // The render's body was never published: it is retired, not left behind.
    expect([...ctx.bodies.objects.values()].map((o) => ctx.text(o.body)).sort()).toEqual([
      'v1',
      'v2',
    ]);
  });

  describe('hold', () => {
    it('stops regeneration: intents are acknowledged as held, a stale page is served as a HIT without queueing', async () => {
      const ctx = await setup(2);
      const result = await hold(ctx.deps, {
        cacheKey: ctx.cacheKey,
        holdSeconds: 3600,
        actor: 'a',
      });
      expect(result.holdUntil).toBe(ctx.clock.seconds + 3600);
      ctx.clock.advance(600); // long stale
      const reply = await ctx.get();
      expect(reply).toMatchObject({ status: 200, cacheStatus: 'HIT' });
      expect(reply.headers['cache-control']).toContain(`s-maxage=${3600 - 600}`);
      expect(ctx.queue.messages).toEqual([]);
      const report = await processMessage(ctx.workerDeps, {
        messageId: 'm1',
        body: encodeIntent({ v: 1, path: '/hello', query: '', deployId: 'd1' }),
        receiveCount: 1,
        groupId: 'g',
      });
      expect(report).toMatchObject({ decision: 'held', action: 'ack' });
      const outcome = await regenerate(ctx.regenerateDeps, {
        cacheKey: ctx.cacheKey,
        need: { kind: 'intent' },
      });
      expect(outcome.decision).toBe('held');
      expect(ctx.counter.calls).toBe(2);
    });

    it('lasts at most 30 days: a longer one is refused, writing nothing (issue 19, item 20)', async () => {
      const ctx = await setup(2);
      const before = await ctx.meta();
      const { cacheKey } = ctx;
      for (const holdSeconds of [MAX_HOLD_SECONDS + 1, 100_000 * 86_400, 0, 1.5]) {
        await expect(hold(ctx.deps, { cacheKey, holdSeconds, actor: 'a' })).rejects.toMatchObject({
          code: 'hold-out-of-bounds',
        });
        await expect(
          rollback(ctx.deps, { cacheKey, holdSeconds, actor: 'a' }),
        ).rejects.toMatchObject({ code: 'hold-out-of-bounds' });
      }
      expect(await ctx.meta()).toEqual(before);
      expect(ctx.state.locks.has(cacheKey.pk)).toBe(false);
      const held = await hold(ctx.deps, { cacheKey, holdSeconds: MAX_HOLD_SECONDS, actor: 'a' });
      expect(held.holdUntil).toBe(ctx.clock.seconds + 30 * 86_400);
    });

    it('ends by itself: once the hold is over, a stale page queues its regeneration again', async () => {
      const ctx = await setup(2);
      await hold(ctx.deps, { cacheKey: ctx.cacheKey, holdSeconds: 60, actor: 'a' });
      ctx.clock.advance(61);
      expect(await ctx.get()).toMatchObject({ cacheStatus: 'STALE' });
      expect(ctx.queue.messages).toHaveLength(1);
    });

    it('is lifted by release, which purges the CDN copy kept until the hold’s end', async () => {
      const ctx = await setup(2);
      await rollback(ctx.deps, { cacheKey: ctx.cacheKey, holdSeconds: 3600, actor: 'a' });
      expect((await ctx.meta())?.ttl).toBeGreaterThanOrEqual(ctx.clock.seconds + 3600);
      ctx.purges.length = 0;
      expect(await release(ctx.deps, { cacheKey: ctx.cacheKey })).toMatchObject({
        decision: 'released',
      });
      expect((await ctx.meta())?.holdUntil).toBeUndefined();
      expect(ctx.purges).toEqual([[cdnKeyTagOf(ctx.cacheKey)]]);
      expect(await release(ctx.deps, { cacheKey: ctx.cacheKey })).toEqual({
        decision: 'not-held',
        cdn: undefined,
      });
      ctx.clock.advance(11);
      expect(await ctx.get()).toMatchObject({ cacheStatus: 'STALE' });
    });

    it('carries over a publish that a viewer needed (a missing body), so the hold stays', async () => {
      const ctx = await setup(2);
      await hold(ctx.deps, { cacheKey: ctx.cacheKey, holdSeconds: 3600, actor: 'a' });
      const live = await ctx.meta();
      await ctx.bodies.deleteBody(live?.s3Key ?? '');
      const reply = await ctx.get();
      expect(reply.status).toBe(200);
      expect((await ctx.meta())?.holdUntil).toBe(live?.holdUntil);
    });
  });
});

describe('resolveVersion', () => {
  const kept = ['VER#0000000300-cc', 'VER#0000000200-bb', 'VER#0000000100-aa'];
  it('accepts an id, a sort key or a unique prefix', () => {
    expect(resolveVersion(kept, '0000000200-bb')).toBe(kept[1]);
    expect(resolveVersion(kept, 'VER#0000000100-aa')).toBe(kept[2]);
    expect(resolveVersion(kept, '00000003')).toBe(kept[0]);
  });
  it('names the kept ids when nothing or several match', () => {
    expect(() => resolveVersion(kept, '9')).toThrow(/kept: 0000000300-cc, 0000000200-bb/);
    expect(() => resolveVersion(kept, '0000000')).toThrow(VersionRequestError);
  });
});
