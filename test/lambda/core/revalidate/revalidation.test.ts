import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { InMemoryRegenerationQueue } from '../../../../lambda/adapters/regeneration-queue/memory.js';
import { DynamoRevalidationMarks } from '../../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { STATE, tagPartition } from '../../../../lambda/adapters/tag-index/dynamodb.js';
import {
  DynamoTagRevalidations,
  TAG_STATE_TTL_SECONDS,
} from '../../../../lambda/adapters/tag-revalidations/dynamodb.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import type { CdnPurge } from '../../../../lambda/core/page/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import {
  revalidate,
  type RevalidationDeps,
} from '../../../../lambda/core/revalidate/revalidation.js';
import { TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';
import { createOriginHarness, type OriginHarness } from '../../../helpers/origin-harness.js';
import { countingRenderer } from '../../../helpers/renderers.js';

/** Renders of `/race-*` pause until released, so a revalidation lands in the middle of one. */
let release: (() => void) | undefined;
let rendering: (() => void) | undefined;
const counter = countingRenderer(async (request, call) => {
  if (request.cacheKey.path.startsWith('/race') && rendering !== undefined) {
    const signal = rendering;
    rendering = undefined;
    signal();
    await new Promise<void>((resolve) => (release = resolve));
  }
  return {
    ...htmlPage(`<p>${request.cacheKey.key} #${call}</p>`, { revalidateSeconds: 60 }),
    tags: [`page:${request.cacheKey.path.split('/')[1] ?? ''}`, 'all'],
  };
});
const clock = new TestClock();
let h: OriginHarness;
let deps: RevalidationDeps;
let effects = 0;

beforeAll(async () => {
  h = await createOriginHarness({ renderer: counter.renderer, clock });
  const tables = { client: h.clients.dynamodb, tableName: h.config.tableName };
  deps = {
    marks: new DynamoRevalidationMarks(tables),
    tagIndex: new DynamoTagRevalidations({ ...tables, pageSize: 2 }),
    queue: new InMemoryRegenerationQueue(), // nothing here regenerates
    cdn: { invalidateTags: (): Promise<CdnPurge> => Promise.resolve({ status: 'not-configured' }) },
    clock,
    deployId: 'd1',
  };
});
afterAll(() => h.destroy());

const stale = (keys: string[] = [], tags: string[] = []) =>
  revalidate(deps, {
    tenant: undefined,
    keys: keys.map((path) => h.keyFor(path)),
    tags,
    mode: 'stale',
    regenerate: false,
    effectId: `rv_${++effects}`,
  });

describe('revalidation on DynamoDB Local', () => {
  it('marks every page under a tag, following the index across pages, and only those', async () => {
    for (const path of ['/tagged-1', '/tagged-2', '/tagged-3', '/other']) await h.invoke(path);
    // each page has its own `page:<path>` tag and the shared `all`
    const effect = await stale([], ['page:tagged-1', 'page:tagged-2', 'page:tagged-3']);
    expect(effect.pages).toBe(3);
    for (const path of ['/tagged-1', '/tagged-2', '/tagged-3']) {
      expect((await h.invoke(path)).cache).toBe('STALE');
    }
    expect((await h.invoke('/other')).cache).toBe('HIT');
  });

  it('marks META for Recipe A readers too (revalidate_seconds 0), keeping its FaceTheory attributes', async () => {
    await h.invoke('/recipe-a');
    const before = await h.cacheTable.getMeta(h.keyFor('/recipe-a').pk, { consistent: true });
    await stale(['/recipe-a']);
    const after = await h.cacheTable.getMeta(h.keyFor('/recipe-a').pk, { consistent: true });
    expect(after).toMatchObject({
      s3Key: before?.s3Key,
      generatedAt: before?.generatedAt,
      etag: before?.etag,
      revalidateSeconds: 0,
      revalidatedAt: clock.seconds,
    });
  });

  it("records each tag's revalidation in a row that expires: a week after, by DynamoDB TTL", async () => {
    await stale([], ['page:ttl-check']);
    const { Item } = await h.clients.dynamodb.send(
      new GetItemCommand({
        TableName: h.config.tableName,
        Key: { pk: { S: tagPartition(undefined, 'page:ttl-check') }, sk: { S: STATE } },
        ConsistentRead: true,
      }),
    );
    expect(Number(Item?.revalidated_at_ms?.N)).toBe(clock.now());
    expect(Number(Item?.ttl?.N)).toBe(clock.seconds + TAG_STATE_TTL_SECONDS);
  });

  it('creates no row for a page that was never cached', async () => {
    expect((await stale(['/never-cached'])).pages).toBe(0);
    expect(await h.cacheTable.getMeta(h.keyFor('/never-cached').pk, { consistent: true })).toBe(
      undefined,
    );
  });

  /** What the page held when the racing render read META under its lease. */
  type Before = 'uncached' | 'cached' | 'marked';

  /**
   * A regeneration renders; a revalidation of its page lands in the same second; then the render
   * tries to publish. Before it: the page was never cached (a first render, no META), cached, or
   * cached and already marked by an earlier revalidation. @returns the page a viewer gets
   * afterwards, how often it was rendered, and the racing render's own page
   */
  async function sameSecondRace(path: string, before: Before) {
    if (before !== 'uncached') await h.invoke(path);
    if (before === 'marked') await stale([path]);
    clock.advance(61);
    const started = new Promise<void>((resolve) => (rendering = resolve));
    const inFlight = regenerate(h.deps, { cacheKey: h.keyFor(path), need: { kind: 'intent' } });
    await started;
    const racing = `<p>${h.keyFor(path).key} #${counter.calls}</p>`; // the page it is rendering
    await stale([path]); // the same second as the render's start: the TestClock has not moved
    release?.();
    await inFlight;
    const renders = counter.callsFor(path);
    return { reply: await h.invoke(path), renders, racing };
  }

  /** Each case, and the one condition that alone refuses its racing render. */
  const races: { before: Before; guard: string; name: string }[] = [
    { before: 'cached', guard: Guard.stillUnmarked, name: 'META still unmarked' },
    { before: 'marked', guard: Guard.sameMark, name: "META's mark unchanged" },
    { before: 'uncached', guard: Guard.notRevalidated, name: 'LOCK unmarked' },
  ];

  it.each(races)(
    'a render that started before a revalidation, in the same second, never makes the page fresh ($before)',
    async ({ before }) => {
      const { reply, renders, racing } = await sameSecondRace(`/race-guarded-${before}`, before);
      const earlier = before === 'uncached' ? 0 : 1;
      expect(renders).toBe(earlier + 2); // the racing render, and one after the revalidation
      expect(reply.cache).toBe('HIT');
      expect(reply.text).toBe(counter.lastPageFor(`/race-guarded-${before}`));
      expect(reply.text).not.toBe(racing);
    },
  );

  it.each(races)(
    'negative control ($before): without "$name" on the publish, the older render is published fresh',
    async ({ before, guard }) => {
      const restore = removeGuard(h.clients.dynamodb, guard);
      try {
        const { reply, renders, racing } = await sameSecondRace(
          `/race-unguarded-${before}`,
          before,
        );
        expect(renders).toBe((before === 'uncached' ? 0 : 1) + 1); // published as is
        expect(reply.cache).toBe('HIT'); // ... and served as fresh: the violation
        expect(reply.text).toBe(racing);
      } finally {
        restore();
      }
    },
  );

  it('an expire during the render of a cached page refuses its publish too (META gone)', async () => {
    await h.invoke('/race-expired');
    clock.advance(61);
    const started = new Promise<void>((resolve) => (rendering = resolve));
    const inFlight = regenerate(h.deps, {
      cacheKey: h.keyFor('/race-expired'),
      need: { kind: 'intent' },
    });
    await started;
    await revalidate(deps, {
      tenant: undefined,
      keys: [h.keyFor('/race-expired')],
      tags: [],
      mode: 'expire',
      regenerate: false,
      effectId: `rv_${++effects}`,
    });
    release?.();
    await inFlight;
    expect(counter.callsFor('/race-expired')).toBe(3);
  });

  it('marks a page with META in one write, and a page without META through its LOCK (3 writes)', async () => {
    await h.invoke('/one-write');
    const writes: string[] = [];
    const counted = {
      ...deps,
      marks: {
        markLock: (pk: string, id: string) => (writes.push('lock'), deps.marks.markLock(pk, id)),
        markStale: (pk: string, input: { effectId: string; now: number }) => (
          writes.push('meta'),
          deps.marks.markStale(pk, input)
        ),
        expire: (pk: string) => (writes.push('expire'), deps.marks.expire(pk)),
        clearPass: (pk: string) => (writes.push('pass'), deps.marks.clearPass(pk)),
      },
    };
    const one = { tenant: undefined, tags: [], mode: 'stale', regenerate: false } as const;
    await revalidate(counted, { ...one, keys: [h.keyFor('/one-write')], effectId: 'rv_w1' });
    expect(writes).toEqual(['pass', 'meta']); // a path's hit-for-pass mark, then META: no LOCK
    writes.length = 0;
    await revalidate(counted, { ...one, keys: [h.keyFor('/no-meta')], effectId: 'rv_w2' });
    expect(writes).toEqual(['pass', 'meta', 'lock', 'meta']);
  });
});
