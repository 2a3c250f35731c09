/**
 * The worker's part of a soft purge (`core/revalidate/soft-purge.ts`): an intent a revalidation
 * flagged sends its page's key-tag purge when it ends with the page's live generation published
 * after the mark (new, duplicate, fresh, superseded), before the intent is acknowledged, and
 * never for a held page, a lease another holds or a failure (the deadline covers those).
 */
import { describe, expect, it } from '@jest/globals';
import { InMemoryPurgeQueue } from '../../../../lambda/adapters/purge-queue/memory.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { cdnKeyTagOf } from '../../../../lambda/core/page/cache-tags.js';
import type { CacheMeta } from '../../../../lambda/core/page/model.js';
import type { PurgeQueue } from '../../../../lambda/core/revalidate/ports.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import { parsePurge } from '../../../../lambda/core/revalidate/purge-message.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { withOverrides } from '../../../helpers/overrides.js';
import { countingRenderer, type PageFunction } from '../../../helpers/renderers.js';
import { intentFor, message } from '../../../helpers/worker-harness.js';

const EFFECT = 'rv_00000000000000000000000000000001';
const flagged = (path: string) => intentFor(path, { purge: { effectId: EFFECT } });

function setup(page: PageFunction = () => htmlPage('page', { revalidateSeconds: 60 })) {
  const counter = countingRenderer(page);
  const service = memoryService({ renderer: counter.renderer });
  const purges = new InMemoryPurgeQueue();
  /** META of the page when each purge was sent: the purge must follow the publish. */
  const metaAtSend: (CacheMeta | undefined)[] = [];
  const key = service.keyFor('/a');
  const queue: PurgeQueue = {
    send: async (sent) => {
      metaAtSend.push(await service.cacheTable.getMeta(key.pk));
      return purges.send(sent);
    },
  };
  const deps = { ...service.workerDeps, purgeQueue: queue };
  const deliver = (id: string, body: string, receiveCount = 1, with_ = deps) =>
    processMessage(with_, message(id, body, receiveCount));
  /** The page published, then marked stale by a revalidation (as the fan-out does). */
  const publishedThenMarked = async () => {
    await deliver('m0', intentFor('/a'));
    await service.marks.markLock(key.pk, EFFECT);
    await service.marks.markStale(key.pk, { effectId: EFFECT, now: service.clock.seconds });
    purges.drain();
    metaAtSend.splice(0);
  };
  const sentTags = () => purges.visible.map((purge) => parsePurge(purge.body).tags);
  return {
    ...service,
    counter,
    purges,
    deps,
    deliver,
    key,
    metaAtSend,
    publishedThenMarked,
    sentTags,
  };
}

describe('the soft purge of a flagged intent (unit, in-memory ports)', () => {
  it('new: sends the page key tag, undelayed, once its new META is published, then acks', async () => {
    const ctx = setup();
    await ctx.publishedThenMarked();
    const report = await ctx.deliver('m1', flagged('/a'));
    expect(report).toMatchObject({ decision: 'new', action: 'ack', detail: { softPurge: EFFECT } });
    expect(ctx.sentTags()).toEqual([[cdnKeyTagOf(ctx.key)]]);
    expect(ctx.purges.visible[0]?.delaySeconds).toBe(0);
    expect(parsePurge(ctx.purges.visible[0]?.body ?? '')).toMatchObject({
      effectId: EFFECT,
      reason: 'published',
    });
    // Sent after the publish: META was already the new, fresh generation.
    expect(ctx.metaAtSend[0]?.revalidateSeconds).toBe(60);
    expect(ctx.metaAtSend[0]?.generatedAt).toBe(ctx.clock.seconds);
  });

  it('duplicate: a redelivery of a published intent sends it again (a crash between publish and send)', async () => {
    const ctx = setup();
    await ctx.publishedThenMarked();
    await ctx.deliver('m1', flagged('/a'));
    ctx.clock.advance(61); // stale again: only REQ# tells it is the same intent
    const replay = await ctx.deliver('m1', flagged('/a'), 2);
    expect(replay).toMatchObject({ decision: 'duplicate', action: 'ack' });
    expect(ctx.sentTags()).toHaveLength(2);
    expect(ctx.counter.calls).toBe(2); // one render before the mark, one for the intent
  });

  it('fresh: the page was published after the mark by another regeneration', async () => {
    const ctx = setup();
    await ctx.publishedThenMarked();
    await ctx.deliver('m-stale-hit', intentFor('/a')); // a stale hit's intent published first
    expect(await ctx.deliver('m1', flagged('/a'))).toMatchObject({ decision: 'fresh' });
    expect(ctx.sentTags()).toEqual([[cdnKeyTagOf(ctx.key)]]); // the unflagged one sent none
  });

  it('superseded: a newer generation is live', async () => {
    const ctx = setup();
    await ctx.publishedThenMarked();
    const older = withOverrides(ctx.cacheTable, {
      publishGeneration: (input) =>
        ctx.cacheTable.publishGeneration({ ...input, meta: { ...input.meta, generatedAt: 0 } }),
    });
    const report = await ctx.deliver('m1', flagged('/a'), 1, { ...ctx.deps, cacheTable: older });
    expect(report).toMatchObject({ decision: 'superseded', action: 'ack' });
    expect(ctx.sentTags()).toHaveLength(1);
  });

  describe('sends nothing when the page is not published by it: the deadline covers it', () => {
    it('held', async () => {
      const ctx = setup();
      await ctx.publishedThenMarked();
      const meta = ctx.state.metas.get(ctx.key.pk) as CacheMeta;
      ctx.state.metas.set(ctx.key.pk, { ...meta, holdUntil: ctx.clock.seconds + 3600 });
      expect(await ctx.deliver('m1', flagged('/a'))).toMatchObject({ decision: 'held' });
      expect(ctx.sentTags()).toEqual([]);
    });

    it('lease-held', async () => {
      const ctx = setup();
      await ctx.publishedThenMarked();
      const lease = { pk: ctx.key.pk, now: ctx.clock.seconds, durationSeconds: 30 };
      await ctx.cacheTable.acquireLease(lease);
      expect(await ctx.deliver('m1', flagged('/a'))).toMatchObject({ decision: 'lease-held' });
      expect(ctx.sentTags()).toEqual([]);
    });

    it('render-failed (acknowledged, the page kept) and refused (dead-lettered)', async () => {
      for (const [status, decision] of [
        [503, 'render-failed'],
        [403, 'refused'],
      ] as const) {
        let call = 0;
        const ctx = setup(() => htmlPage('page', { status: ++call === 1 ? 200 : status }));
        await ctx.publishedThenMarked();
        expect(await ctx.deliver('m1', flagged('/a'))).toMatchObject({ decision });
        expect(ctx.sentTags()).toEqual([]);
      }
    });

    it('an intent the revalidation did not flag (past the bound, or without regenerate)', async () => {
      const ctx = setup();
      await ctx.publishedThenMarked();
      expect(await ctx.deliver('m1', intentFor('/a'))).toMatchObject({ decision: 'new' });
      expect(ctx.sentTags()).toEqual([]);
    });
  });

  it('before the ack: a failed send leaves the intent unacknowledged; its redelivery sends it', async () => {
    const ctx = setup();
    await ctx.publishedThenMarked();
    const down = { ...ctx.deps, purgeQueue: { send: () => Promise.reject(new Error('SQS down')) } };
    const failed = await ctx.deliver('m1', flagged('/a'), 1, down);
    expect(failed).toMatchObject({
      decision: 'retry',
      action: 'retry',
      error: { code: 'soft-purge-not-queued' },
    });
    expect(String((failed as { error: Error }).error.message)).toContain("after 'new'");
    const retried = await ctx.deliver('m1', flagged('/a'), 2);
    expect(retried).toMatchObject({
      decision: 'fresh',
      action: 'ack',
      detail: { softPurge: EFFECT },
    });
    expect(ctx.sentTags()).toEqual([[cdnKeyTagOf(ctx.key)]]);
    // On its last receive it is dead-lettered (the deadline purges the page), never looped.
    const last = await ctx.deliver('m2', flagged('/a'), 5, down);
    expect(last).toMatchObject({ action: 'dead-letter', reason: { code: 'retries-exhausted' } });
    expect(last).toMatchObject({ reason: { message: expect.stringContaining('soft purge') } });
  });

  it('parses the flag strictly: a purge without its effect id is poison', async () => {
    const ctx = setup();
    const report = await ctx.deliver('m1', intentFor('/a', { purge: {} as { effectId: string } }));
    expect(report).toMatchObject({ decision: 'poison', action: 'dead-letter' });
  });
});
