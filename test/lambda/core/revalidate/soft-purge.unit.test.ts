/**
 * The revalidation's part of a soft purge (`core/revalidate/soft-purge.ts`): with
 * `regenerate: true` (mode `stale`) the CDN is not purged at once; the paths' deadline purge is
 * queued, delayed, at accept, each tag's by its fan-out's last batch, and the first pages'
 * intents carry the purge flag, up to the bound. Without `regenerate`, the purge is at once.
 */
import { describe, expect, it } from '@jest/globals';
import { InMemoryPurgeQueue } from '../../../../lambda/adapters/purge-queue/memory.js';
import { cdnKeyTagOf } from '../../../../lambda/core/page/cache-tags.js';
import { acceptRevalidation } from '../../../../lambda/core/revalidate/fan-out.js';
import {
  deadlinePurgesOf,
  MAX_TAGS_PER_PURGE_MESSAGE,
  parsePurge,
  softPurgeOf,
} from '../../../../lambda/core/revalidate/purge-message.js';
import { statusJson } from '../../../../lambda/core/revalidate/revalidation-status.js';
import { revalidate } from '../../../../lambda/core/revalidate/revalidation.js';
import { backgroundService } from '../../../helpers/fan-out.js';
import { withOverrides } from '../../../helpers/overrides.js';

const DEADLINE = 300;

/** A service whose pages /a .. /e carry the tag `post`, with soft purges bounded at `bound`. */
async function service(options: { bound?: number; batchSize?: number } = {}) {
  const queue = new InMemoryPurgeQueue();
  const ctx = backgroundService({
    batchSize: options.batchSize ?? 100,
    softPurge: { queue, deadlineSeconds: DEADLINE, maxPagesPerEffect: options.bound ?? 1_000 },
  });
  for (const path of ['/a', '/b', '/c', '/d', '/e']) await ctx.get(path);
  ctx.queue.drain(); // nothing queued by the renders matters here
  const deadlines = () =>
    queue.delayed.map((purge) => ({ delay: purge.delaySeconds, ...parsePurge(purge.body) }));
  const flagged = () => ctx.queue.messages.filter((queued) => queued.intent.purge !== undefined);
  return { ...ctx, purgeQueue: queue, deadlines, flagged };
}

describe('a revalidation with soft purges (unit, in-memory ports)', () => {
  it('regenerate: true queues the delayed deadline purge and makes no immediate one', async () => {
    const ctx = await service();
    const keyA = ctx.keyFor('/a');
    const revalidation = ctx.revalidation({ keys: [keyA], regenerate: true });
    const effect = await acceptRevalidation(ctx.deps, revalidation);
    expect(ctx.purges).toEqual([]); // no invalidation at accept
    expect(effect.cdn).toEqual({
      status: 'deferred',
      deadlineSeconds: DEADLINE,
      deadlineAtMs: undefined, // the tag is still marking
    });
    // The paths' deadline at accept; the tag's once its last batch has marked its pages.
    expect(ctx.deadlines()).toEqual([
      expect.objectContaining({
        delay: DEADLINE,
        reason: 'deadline',
        effectId: revalidation.effectId,
        tags: [cdnKeyTagOf(keyA)],
      }),
    ]);
    expect(ctx.purgeQueue.visible).toEqual([]);
    await ctx.drain();
    expect(ctx.deadlines().map((purge) => purge.tags)).toEqual([[cdnKeyTagOf(keyA)], ['_/post']]);
    expect(ctx.purges).toEqual([]);
    // Every intent carries the purge flag of its effect.
    expect(ctx.queue.messages).toHaveLength(5); // /a once: marked by path and by tag, one intent
    expect(ctx.flagged()).toHaveLength(ctx.queue.messages.length);
    expect(ctx.flagged()[0]?.intent.purge).toEqual({ effectId: revalidation.effectId });
    const status = await ctx.deps.statuses.get(revalidation.effectId);
    expect(status?.state).toBe('done');
    expect(statusJson(status!).cdn).toEqual({
      status: 'deferred',
      deadline_seconds: DEADLINE,
      deadline_at: new Date((status?.doneAtMs ?? 0) + DEADLINE * 1000).toISOString(),
    });
  });

  it('regenerate: false purges at once as before, tags and paths, and queues no purge', async () => {
    const ctx = await service();
    const keyA = ctx.keyFor('/a');
    const effect = await acceptRevalidation(
      ctx.deps,
      ctx.revalidation({ keys: [keyA], regenerate: false }),
    );
    expect(ctx.purges).toEqual([['_/post', cdnKeyTagOf(keyA)]]);
    expect(effect.cdn).toMatchObject({ status: 'submitted' });
    await ctx.drain();
    expect(ctx.purgeQueue.delayed).toEqual([]);
    expect(ctx.flagged()).toEqual([]);
  });

  it('expire with regenerate: true is a takedown: purged at once, never deferred', async () => {
    const ctx = await service();
    await acceptRevalidation(ctx.deps, ctx.revalidation({ mode: 'expire', regenerate: true }));
    await ctx.drain();
    expect(ctx.purges).toEqual([['_/post']]);
    expect(ctx.purgeQueue.delayed).toEqual([]);
    expect(ctx.flagged()).toEqual([]);
  });

  it("bounds the soft purges of an effect across its batches by the status's marked count", async () => {
    const flaggedWith = async (bound: number, options: { blind?: boolean } = {}) => {
      const ctx = await service({ bound, batchSize: 2 });
      if (options.blind === true) {
        // The guard removed: each step reads no count, so each batch gets the whole bound.
        const statuses = ctx.deps.statuses;
        Object.assign(ctx.deps, {
          statuses: withOverrides(statuses, {
            get: async (id: string) => {
              const status = await statuses.get(id);
              return status === undefined ? undefined : { ...status, marked: 0 };
            },
          }),
        });
      }
      await acceptRevalidation(ctx.deps, ctx.revalidation({ regenerate: true }));
      await ctx.drain();
      expect(ctx.queue.messages).toHaveLength(5);
      return ctx.flagged().length;
    };
    expect(await flaggedWith(3)).toBe(3);
    expect(await flaggedWith(0)).toBe(0);
    expect(await flaggedWith(1_000)).toBe(5);
    // Negative control: without the effect's count, three batches of 2, 2 and 1 flag all 5.
    expect(await flaggedWith(3, { blind: true })).toBe(5);
  });

  it('a revalidation by path only names its deadline in the receipt (the only deadline it sends)', async () => {
    const ctx = await service();
    const effect = await acceptRevalidation(
      ctx.deps,
      ctx.revalidation({ keys: [ctx.keyFor('/a')], tags: [], regenerate: true }),
    );
    expect(effect.cdn).toMatchObject({
      status: 'deferred',
      deadlineAtMs: ctx.clock.now() + DEADLINE * 1000,
    });
    expect(ctx.deadlines()).toHaveLength(1);
  });

  it("a tag without pages starts no fan-out: its purge goes in the accept's deadline, with the paths'", async () => {
    const ctx = await service();
    const keyA = ctx.keyFor('/a');
    const effect = await acceptRevalidation(
      ctx.deps,
      ctx.revalidation({ keys: [keyA], tags: ['nothing-here'], regenerate: true }),
    );
    expect(ctx.queue.fanOuts).toHaveLength(0);
    expect(effect.cdn).toMatchObject({
      status: 'deferred',
      deadlineAtMs: ctx.clock.now() + DEADLINE * 1000, // the last deadline: no fan-out sends one
    });
    expect(ctx.deadlines().map((purge) => purge.tags)).toEqual([
      ['_/nothing-here', cdnKeyTagOf(keyA)],
    ]);
  });

  it('marked before its answer (no background), defers the whole purge to one deadline', async () => {
    const ctx = await service();
    const keyA = ctx.keyFor('/a');
    const effect = await revalidate(ctx.deps, ctx.revalidation({ keys: [keyA], regenerate: true }));
    expect(ctx.purges).toEqual([]);
    expect(effect.cdn).toMatchObject({ status: 'deferred', deadlineSeconds: DEADLINE });
    expect(ctx.deadlines().map((purge) => purge.tags)).toEqual([['_/post', cdnKeyTagOf(keyA)]]);
    expect(ctx.flagged()).toHaveLength(5);
  });
});

describe('purge messages', () => {
  it('a soft purge is the page key tag, undelayed; a variant purges its page (every variant)', () => {
    const ctx = backgroundService();
    const page = ctx.keyFor('/a');
    const variant = { ...page, hash: 'f'.repeat(64), pageHash: page.hash };
    expect(softPurgeOf('rv_1', page)).toEqual({
      body: JSON.stringify({
        kind: 'cdn-purge',
        v: 1,
        effectId: 'rv_1',
        reason: 'published',
        tags: [cdnKeyTagOf(page)],
      }),
      delaySeconds: 0,
    });
    expect(parsePurge(softPurgeOf('rv_1', variant).body).tags).toEqual([cdnKeyTagOf(page)]);
  });

  it('a deadline is split into messages of at most 100 tags, each tag once, all delayed', () => {
    const tags = Array.from({ length: 250 }, (_, i) => `_/tag-${i}`);
    const purges = deadlinePurgesOf('rv_1', [...tags, tags[0]], 300);
    expect(purges.map((purge) => parsePurge(purge.body).tags.length)).toEqual([
      MAX_TAGS_PER_PURGE_MESSAGE,
      MAX_TAGS_PER_PURGE_MESSAGE,
      50,
    ]);
    expect(purges.every((purge) => purge.delaySeconds === 300)).toBe(true);
    expect(purges.flatMap((purge) => parsePurge(purge.body).tags)).toEqual(tags);
  });
});
