/**
 * The table's other writers as model-check actors (issues 19, 23): revalidations (by path or by
 * tag, `stale` or `expire`, with or without `regenerate`) through `acceptRevalidation`, the
 * revalidate function's own entry (tags then marked by fan-out steps, `fan-out.ts`), and an
 * operator's hold, maybe released; and the invariant that the tag index covers every tag of
 * every META. What a 202 promises is checked in `revalidation-checks.ts`.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { PAGE, tagPartition } from '../../lambda/adapters/tag-index/dynamodb.js';
import { keyOf } from '../../lambda/adapters/shared/dynamodb/items.js';
import type { CacheKey, CacheMeta } from '../../lambda/core/page/model.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import { CdnPurgeRejectedError, IsrError } from '../../lambda/core/errors.js';
import { purgeIdOf, purgeTagsOf } from '../../lambda/core/cdn-purge.js';
import { isHeld } from '../../lambda/core/page/freshness.js';
import { hold, release } from '../../lambda/core/operate/rollback.js';
import type { CdnInvalidator, RevalidationsInProgress } from '../../lambda/core/page/ports.js';
import type { RevalidationMarks } from '../../lambda/core/revalidate/ports.js';
import { acceptRevalidation } from '../../lambda/core/revalidate/fan-out.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import type { RevalidateConfig } from '../../lambda/shared/config.js';
import { createRevalidateDeps } from '../../lambda/revalidate/build.js';
import type { Interleaver } from './interleaver.js';
import type { FakeSqs } from './queue.js';
import { purgerFor, type FakeCdn } from './sweeper.js';
import { LEASE_SECONDS, type ModelEvent } from './world.js';

export interface RevalidationPlan {
  readonly skew: number;
  readonly by: 'path' | 'tag';
  readonly tag: 'all' | 'p0' | 'p1';
  readonly mode: 'stale' | 'expire';
  readonly regenerate: boolean;
}
export interface HoldPlan {
  readonly skew: number;
  readonly release: boolean;
}

export const writerArbitraries = (skew: fc.Arbitrary<number>) => ({
  revalidations: fc.array(
    fc.record({
      skew,
      by: fc.constantFrom('path' as const, 'tag' as const),
      tag: fc.constantFrom('all' as const, 'p0' as const, 'p1' as const),
      mode: fc.constantFrom('stale' as const, 'expire' as const),
      regenerate: fc.boolean(),
    }),
    { maxLength: 2 },
  ),
  holds: fc.array(fc.record({ skew, release: fc.boolean() }), { maxLength: 1 }),
});

interface WriterWorld {
  readonly log: ModelEvent[];
  readonly tagPrefix: string;
  readonly firstCall: Map<string, number>;
  trueTime: number;
  clockFor(skew: number): Clock;
  sleepingClockFor(actor: string, skew: number, interleaver: Interleaver): Clock;
}

export interface WriterContext {
  readonly world: WriterWorld;
  readonly interleaver: Interleaver;
  readonly keys: readonly CacheKey[];
  readonly tableName: string;
  readonly bucket: string;
  readonly deployId: string;
  readonly clientsOf: (actor: string, faults: { skew: number }) => AwsClients;
  readonly runId: string;
  readonly revalidateConfig: RevalidateConfig;
  /** The queue fan-out steps and intents go to. */
  readonly sqs: FakeSqs;
  /** Every revalidation's effect id, as it starts. */
  readonly effectIds: Set<string>;
  /** The marks port of `effectId`, observed (and mutated by a control). */
  readonly marksOf: (marks: RevalidationMarks, effectId: string, clock: Clock) => RevalidationMarks;
  /** The CDN every purge goes to. */
  readonly cdn: FakeCdn;
  /** A guard removed for a negative control (`none` otherwise). */
  readonly mutation: string;
}

/** Starts every revalidation and hold of the plan on the interleaver; @returns their actor names */
export function startWriters(
  ctx: WriterContext,
  plan: { revalidations: readonly RevalidationPlan[]; holds: readonly HoldPlan[] },
): string[] {
  const actors: string[] = [];
  plan.revalidations.forEach((revalidation, index) => {
    const actor = `v${index}`;
    actors.push(actor);
    void ctx.interleaver.start(actor, () => runRevalidation(ctx, actor, revalidation));
  });
  plan.holds.forEach((holdPlan, index) => {
    const actor = `h${index}`;
    actors.push(actor);
    const clients = ctx.clientsOf(actor, { skew: holdPlan.skew });
    const tables = { client: clients.dynamodb, tableName: ctx.tableName };
    const deps = {
      cacheTable: new DynamoCacheTable(tables),
      history: new DynamoPageHistory(tables),
      bodies: new S3BodyStore({ client: clients.s3, bucket: ctx.bucket }),
      clock: ctx.world.clockFor(holdPlan.skew),
      leaseSeconds: LEASE_SECONDS,
    };
    const cacheKey = ctx.keys[0];
    void ctx.interleaver.start(actor, async () => {
      try {
        await hold(deps, { cacheKey, holdSeconds: 3 * LEASE_SECONDS, actor });
        if (holdPlan.release) await release(deps, { cacheKey });
      } catch (error) {
        // Refused (META changed or gone, the lease was taken): nothing was written.
        if (!(error instanceof IsrError)) throw error;
      }
    });
  });
  return actors;
}

/**
 * A revalidation as the revalidate function applies it before its 202 (`acceptRevalidation`:
 * the pages named by path marked, each tag's in-progress entries, progress row and first
 * fan-out step written, the wait for origins' cached reads, the CDN purge), wired as
 * `createRevalidateDeps` wires it: DynamoDB rows, the model's queue and CDN, and a clock whose
 * wait is model time. Its request arrives when the schedule says (`revalidate:request`).
 */
async function runRevalidation(ctx: WriterContext, actor: string, plan: RevalidationPlan) {
  await ctx.interleaver.gate(actor, 'revalidate:request');
  const from = ctx.world.log.length;
  ctx.world.firstCall.set(actor, from);
  const clients = ctx.clientsOf(actor, { skew: plan.skew });
  const tags = plan.by === 'tag' ? [`${ctx.world.tagPrefix}${plan.tag}`] : [];
  const clock = ctx.world.sleepingClockFor(actor, plan.skew, ctx.interleaver);
  const effectId = `rv_${actor}-${ctx.runId}`;
  ctx.effectIds.add(effectId);
  const purger = purgerFor(ctx.cdn, actor, clients.dynamodb, ctx.tableName, clock, ctx.mutation);
  let purgeId: string | undefined;
  const cdn: CdnInvalidator = {
    invalidateTags: (cdnTags, options) => {
      purgeId = purgeIdOf(purgeTagsOf(cdnTags), { effectIds: [effectId] });
      return purger.invalidateTags(cdnTags, options);
    },
  };
  const deps = createRevalidateDeps(ctx.revalidateConfig, { clients, clock, cdn });
  const queue = ctx.sqs.queueFor(actor);
  const marks = ctx.marksOf(deps.revalidation.marks, effectId, clock);
  const background = deps.background ?? ({} as never);
  const answered = await acceptRevalidation(
    {
      ...deps.revalidation,
      ...background,
      marks,
      queue,
      fanOutQueue: queue,
      statuses: deps.statuses,
      ...mutated(ctx.mutation, background),
    },
    {
      tenant: undefined,
      keys: plan.by === 'path' ? [ctx.keys[0]] : [],
      tags,
      mode: plan.mode,
      regenerate: plan.regenerate,
      effectId,
    },
  ).catch((error: unknown) => {
    // The CDN refused the purge outright: the endpoint answers an error, not a 202.
    if (error instanceof CdnPurgeRejectedError) return undefined;
    throw error;
  });
  if (answered === undefined) return;
  const pks = plan.by === 'path' ? [ctx.keys[0].pk] : ctx.keys.map((key) => key.pk);
  ctx.world.log.push({ kind: 'revalidated', actor, from, pks, tags, mode: plan.mode, purgeId });
}

/** The revalidate function's guards a negative control removes. */
function mutated(
  mutation: string,
  background: { readonly inProgress: RevalidationsInProgress },
): { inProgress?: RevalidationsInProgress; inProgressCacheMs?: number } {
  const rows = background.inProgress;
  if (mutation === 'no-in-progress-entries') {
    return {
      inProgress: {
        begin: () => Promise.resolve(),
        end: (tenant, shard, key, effectId) => rows.end(tenant, shard, key, effectId),
        read: (tenant, shard) => rows.read(tenant, shard),
      },
    };
  }
  // The 202 does not wait for origins' cached reads of the rows to run out.
  if (mutation === 'no-in-progress-wait') return { inProgressCacheMs: 0 };
  return {};
}

/**
 * Negative control of the `expire` decision: a held page is only marked stale, and stays. The
 * marks port otherwise as it is.
 */
export function holdBeatsExpire(marks: RevalidationMarks, clock: Clock): RevalidationMarks {
  return new Proxy(marks, {
    get(target, property, receiver) {
      if (property === 'expire') {
        return async (pk: string) => {
          const now = epochSeconds(clock);
          const meta = await target.markStale(pk, { effectId: 'hold-beats-expire', now });
          return meta !== undefined && isHeld(meta, now) ? meta : target.expire(pk);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** The tag index covers every tag of every META: @returns the first tag whose row is missing */
export async function checkTagIndex(
  client: DynamoDBClient,
  tableName: string,
  metas: ReadonlyMap<string, CacheMeta | undefined>,
): Promise<string | undefined> {
  for (const [pk, meta] of metas) {
    for (const tag of meta?.tags ?? []) {
      const { Item } = await client.send(
        new GetItemCommand({
          TableName: tableName,
          Key: keyOf(tagPartition(undefined, tag), `${PAGE}${pk}`),
          ConsistentRead: true,
        }),
      );
      if (Item === undefined)
        return `${pk} carries tag ${tag}, but the tag index has no row for it`;
    }
  }
  return undefined;
}
