/**
 * The tag index under racing publishes (issue 19, item 1), on DynamoDB Local: a publish removes
 * the tags its page lost after its transaction, and that removal can be late (a retried batch);
 * the next publish of the page may give the tag back meanwhile. A revalidation of the tag must
 * still find the page.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { DynamoRevalidationMarks } from '../../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { DynamoTagRevalidations } from '../../../../lambda/adapters/tag-revalidations/dynamodb.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import type { CdnPurge, TagIndex } from '../../../../lambda/core/page/ports.js';
import { SqsRegenerationQueue } from '../../../../lambda/adapters/regeneration-queue/sqs.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import {
  revalidate,
  type RevalidationDeps,
} from '../../../../lambda/core/revalidate/revalidation.js';
import { TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';
import { createOriginHarness, type OriginHarness } from '../../../helpers/origin-harness.js';
import { countingRenderer, gate } from '../../../helpers/renderers.js';

/** Each path's renders carry the tags listed for it, in turn (the last list repeats). */
const tagTurns = new Map<string, string[][]>();
const counter = countingRenderer((request) => {
  const turns = tagTurns.get(request.cacheKey.path) ?? [[]];
  const tags = turns.length > 1 ? (turns.shift() ?? []) : turns[0];
  return { ...htmlPage(`<p>${request.cacheKey.path}</p>`, { revalidateSeconds: 60 }), tags };
});
const clock = new TestClock();
let h: OriginHarness;
let revalidation: RevalidationDeps;
let effects = 0;

beforeAll(async () => {
  h = await createOriginHarness({ renderer: counter.renderer, clock });
  const tables = { client: h.clients.dynamodb, tableName: h.config.tableName };
  revalidation = {
    marks: new DynamoRevalidationMarks(tables),
    tagIndex: new DynamoTagRevalidations(tables),
    queue: new SqsRegenerationQueue({ client: h.clients.sqs, queueUrl: h.queues.queueUrl }),
    cdn: { invalidateTags: (): Promise<CdnPurge> => Promise.resolve({ status: 'not-configured' }) },
    clock,
    deployId: 'd1',
  };
});
afterAll(() => h.destroy());

const pagesUnder = (tag: string) =>
  revalidate(revalidation, {
    tenant: undefined,
    keys: [],
    tags: [tag],
    mode: 'stale',
    regenerate: false,
    effectId: `rv_${++effects}`,
  }).then((effect) => effect.pages);

/** The real tag index, with `remove` held at the gate until the test opens it. */
function slowRemovals(index: TagIndex, held: ReturnType<typeof gate>, called: () => void) {
  return {
    ...index,
    add: index.add.bind(index),
    revalidatedAt: index.revalidatedAt.bind(index),
    remove: async (...args: Parameters<TagIndex['remove']>) => {
      called();
      await held.wait();
      return index.remove(...args);
    },
  } satisfies TagIndex;
}

/**
 * Publish 1 tags the page `t`; publish 2 drops it, and its removal is late; publish 3 gives `t`
 * back, all of it (`whole`) or up to its index write only, before the late removal lands.
 */
async function lateRemoval(path: string, tag: string, whole: boolean) {
  tagTurns.set(path, [[tag], [], [tag]]);
  const key = h.keyFor(path);
  const tagIndex = h.deps.tagIndex as TagIndex;
  await regenerate(h.deps, { cacheKey: key, need: { kind: 'intent' } });
  clock.advance(61);
  const held = gate();
  const removing = gate();
  const second = regenerate(
    { ...h.deps, tagIndex: slowRemovals(tagIndex, held, removing.open) },
    { cacheKey: key, need: { kind: 'intent' } },
  );
  await removing.wait();
  clock.advance(61);
  if (whole) {
    await regenerate(h.deps, { cacheKey: key, need: { kind: 'intent' } });
    held.open();
    await second;
    return;
  }
  // The third render indexes `t`, then waits before its publish while the late removal lands.
  const indexed = gate();
  const publish = gate();
  const third = regenerate(
    {
      ...h.deps,
      tagIndex: {
        ...tagIndex,
        remove: tagIndex.remove.bind(tagIndex),
        revalidatedAt: tagIndex.revalidatedAt.bind(tagIndex),
        add: async (...args: Parameters<TagIndex['add']>) => {
          await tagIndex.add(...args);
          indexed.open();
          await publish.wait();
        },
      },
    },
    { cacheKey: key, need: { kind: 'intent' } },
  );
  await indexed.wait();
  held.open();
  await second;
  publish.open();
  await third;
}

describe('the tag index under racing publishes (DynamoDB Local)', () => {
  it('a late removal never deletes the row a later publish gave back', async () => {
    await lateRemoval('/late-after', 'late-after', true);
    expect(await pagesUnder('late-after')).toBe(1);
    expect((await h.invoke('/late-after')).cache).toBe('STALE');
  });

  it('a late removal never deletes the row of a publish in flight (indexed, not yet published)', async () => {
    await lateRemoval('/late-during', 'late-during', false);
    expect(await pagesUnder('late-during')).toBe(1);
    expect((await h.invoke('/late-during')).cache).toBe('STALE');
  });

  it('negative control: without the META condition, the late removal unindexes the page', async () => {
    const restore = removeGuard(h.clients.dynamodb, Guard.tagNotCarried);
    try {
      await lateRemoval('/late-unguarded', 'late-unguarded', true);
      expect(await pagesUnder('late-unguarded')).toBe(0);
      expect((await h.invoke('/late-unguarded')).cache).toBe('HIT'); // the violation
    } finally {
      restore();
    }
  });

  it('negative control: without the lease condition, the row of a publish in flight is removed', async () => {
    const restore = removeGuard(h.clients.dynamodb, Guard.leaseAbsent);
    try {
      await lateRemoval('/late-in-flight', 'late-in-flight', false);
      expect(await pagesUnder('late-in-flight')).toBe(0);
    } finally {
      restore();
    }
  });
});
