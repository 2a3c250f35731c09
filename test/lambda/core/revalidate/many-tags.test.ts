/**
 * Issue 33, item 2: a revalidation naming several tags with pages started every tag's fan-out
 * at once, each with its own transaction over the same in-progress shard items. AWS cancels a
 * transaction that includes an item another ongoing transaction includes (`TransactionConflict`,
 * the stand-in `TransactionConflicts`); DynamoDB Local serialises them, so no test saw it. Here
 * the DynamoDB adapters run on DynamoDB Local under the documented rule.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { InMemoryRegenerationQueue } from '../../../../lambda/adapters/regeneration-queue/memory.js';
import { DynamoFanOutProgressRows } from '../../../../lambda/adapters/fan-out-progress-rows/dynamodb.js';
import { DynamoFanOutStarts } from '../../../../lambda/adapters/fan-out-starts/dynamodb.js';
import { DynamoRevalidationsInProgress } from '../../../../lambda/adapters/revalidations-in-progress/dynamodb.js';
import { DynamoRevalidationMarks } from '../../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { DynamoRevalidationStatuses } from '../../../../lambda/adapters/revalidation-statuses/dynamodb.js';
import { DynamoTagIndex } from '../../../../lambda/adapters/tag-index/dynamodb.js';
import { DynamoTagRevalidations } from '../../../../lambda/adapters/tag-revalidations/dynamodb.js';
import { parseFanOut } from '../../../../lambda/core/revalidate/fan-out-message.js';
import {
  acceptRevalidation,
  markBatch,
  type AcceptDeps,
} from '../../../../lambda/core/revalidate/fan-out.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { QuietClock, TransactionConflicts } from '../../../helpers/dynamodb-conflicts.js';
import { seededRandom } from '../../../helpers/random.js';
import { keyOf } from '../../../../lambda/adapters/shared/dynamodb/items.js';
import {
  IN_PROGRESS_SK,
  inProgressPartition,
} from '../../../../lambda/adapters/revalidations-in-progress/keys.js';

const inProgressKeyOf = (shard: number) =>
  keyOf(inProgressPartition(undefined, shard), IN_PROGRESS_SK);

const SHARDS = 4;
const made: AwsClients[] = [];

afterEach(() => {
  for (const clients of made.splice(0)) {
    clients.dynamodb.destroy();
    clients.s3.destroy();
    clients.sqs.destroy();
  }
});

/**
 * The revalidate function's background deps on a fresh table, under the conflict rule (or, with
 * `rule: false`, on DynamoDB Local as it is).
 */
async function background(options: { rule?: boolean } = {}) {
  const clients = testClients();
  made.push(clients);
  const tableName = await createTestTable(clients);
  const conflicts = new TransactionConflicts();
  if (options.rule !== false) conflicts.attach(clients.dynamodb);
  const table = { client: clients.dynamodb, tableName };
  // Virtual time: the backoffs' jitter spreads the writers, each woken once the table is quiet.
  const clock = new QuietClock(conflicts);
  const queue = new InMemoryRegenerationQueue();
  const deps: AcceptDeps = {
    marks: new DynamoRevalidationMarks(table),
    tagIndex: new DynamoTagRevalidations(table),
    queue,
    cdn: { invalidateTags: () => Promise.resolve({ status: 'submitted', invalidationIds: [] }) },
    clock,
    random: seededRandom(33),
    deployId: 'd1',
    inProgress: new DynamoRevalidationsInProgress(table),
    shards: SHARDS,
    progress: new DynamoFanOutProgressRows(table),
    starts: new DynamoFanOutStarts(table),
    fanOutQueue: queue,
    statuses: new DynamoRevalidationStatuses(table),
    batchSize: 10,
    inProgressCacheMs: 250,
  };
  return { deps, queue, conflicts, tableName, tags: new DynamoTagIndex({ ...table, clock }) };
}

/** `count` tags, each with one page in its index. */
async function taggedPages(tags: DynamoTagIndex, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, index) => `tag-${index}`);
  await Promise.all(names.map((tag, index) => tags.add(undefined, `CACHE#page-${index}`, [tag])));
  return names;
}

const revalidation = (tags: string[]) => ({
  tenant: undefined,
  keys: [],
  tags,
  mode: 'stale' as const,
  regenerate: false,
  effectId: `rv_${tags.length.toString().padStart(32, '0')}`,
});

/** Accepts a revalidation of `count` tags: every tag's entry is then on every shard. */
async function accepted(ctx: Awaited<ReturnType<typeof background>>, count: number) {
  const names = await taggedPages(ctx.tags, count);
  const effect = revalidation(names);
  await expect(acceptRevalidation(ctx.deps, effect)).resolves.toMatchObject({
    marking: { tags: count },
  });
  for (let shard = 0; shard < SHARDS; shard += 1) {
    expect((await ctx.deps.inProgress.read(undefined, shard)).size).toBe(count);
  }
  return effect;
}

describe('a revalidation of many tags with pages, under DynamoDB’s transaction conflicts', () => {
  it.each([5, 100])('with %i tags answers its 202, every entry on every shard', async (count) => {
    const ctx = await background();
    const effect = await accepted(ctx, count);
    expect(await ctx.deps.statuses.get(effect.effectId)).toMatchObject({
      state: 'marking',
      fanOuts: count,
    });
  });

  it('whose fan-outs finish together, ends done with no entry left', async () => {
    const ctx = await background();
    const effect = await accepted(ctx, 20);
    // The steps run as workers run them, all at once: their ends meet each other's.
    while (ctx.queue.fanOuts.length > 0) {
      const steps = ctx.queue.fanOuts.splice(0).map((queued) => parseFanOut(queued.body));
      await Promise.all(steps.map((step) => markBatch(ctx.deps, step)));
    }
    expect(ctx.conflicts.refusals).toBeGreaterThan(0); // the rule was in play
    expect(await ctx.deps.statuses.get(effect.effectId)).toMatchObject({ state: 'done' });
    for (let shard = 0; shard < SHARDS; shard += 1) {
      expect((await ctx.deps.inProgress.read(undefined, shard)).size).toBe(0);
    }
  });

  it('on DynamoDB Local as it is, the same accept never meets a conflict (why no test saw it)', async () => {
    const ctx = await background({ rule: false });
    await accepted(ctx, 20);
    expect(ctx.conflicts.refusals).toBe(0);
  });
});

describe('an accept that fails', () => {
  it('leaves no status `marking` and no in-progress entry: the Idempotency-Key retry starts clean', async () => {
    const ctx = await background();
    const names = await taggedPages(ctx.tags, 3);
    // Another writer's transaction on shard 0 that never ends: every start meets it.
    ctx.conflicts.begin('TransactWriteItemsCommand', {
      TransactItems: [{ Update: { TableName: ctx.tableName, Key: inProgressKeyOf(0) } }],
    });
    const accepted = revalidation(names);
    await expect(acceptRevalidation(ctx.deps, accepted)).rejects.toThrow();
    expect((await ctx.deps.statuses.get(accepted.effectId))?.state).not.toBe('marking');
    for (let shard = 1; shard < SHARDS; shard += 1) {
      expect((await ctx.deps.inProgress.read(undefined, shard)).size).toBe(0);
    }
  });
});
