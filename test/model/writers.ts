/**
 * The table's other writers as model-check actors (issues 19, 23): revalidations (by path or by
 * tag, `stale` or `expire`, with or without `regenerate`) through `acceptRevalidation`, the
 * revalidate function's own entry (tags then marked by fan-out steps, `fan-out.ts`), and an
 * operator's hold, maybe released; and the invariant that the tag index covers every tag of
 * every META. What a 202 promises is checked in `revalidation-checks.ts`.
 */
import {
  GetItemCommand,
  TransactionCanceledException,
  TransactionConflictException,
  type DynamoDBClient,
  type TransactWriteItemsCommandInput,
} from '@aws-sdk/client-dynamodb';
import { IN_PROGRESS_PREFIX } from '../../lambda/adapters/revalidations-in-progress/keys.js';
import fc from 'fast-check';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { PAGE, tagPartition } from '../../lambda/adapters/shared/dynamodb/tag-rows.js';
import { keyOf } from '../../lambda/adapters/shared/dynamodb/items.js';
import type { CacheKey, CacheMeta } from '../../lambda/core/page/model.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import {
  CdnPurgeRejectedError,
  IsrError,
  TransactionConflictError,
} from '../../lambda/core/errors.js';
import { purgeIdOf, purgeTagsOf } from '../../lambda/core/cdn-purge.js';
import { isHeld } from '../../lambda/core/page/freshness.js';
import { hold, release } from '../../lambda/core/operate/hold.js';
import type { CdnInvalidator } from '../../lambda/core/page/ports.js';
import type { RevalidationMarks, TagRevalidations } from '../../lambda/core/revalidate/ports.js';
import { acceptRevalidation } from '../../lambda/core/revalidate/fan-out.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import type { RevalidateConfig } from '../../lambda/shared/config.js';
import { createRevalidateDeps } from '../../lambda/revalidate/build.js';
import type { Interleaver } from './interleaver.js';
import type { FakeSqs } from './queue.js';
import { purgerFor, type FakeCdn } from './sweeper.js';
import { crossedCdnTags, crossedTagTimes, keysOfTenant, tenantOfPk } from './tenants.js';
import { LEASE_SECONDS, type ActorFaults, type ModelEvent } from './world.js';

export interface RevalidationPlan {
  readonly skew: number;
  readonly by: 'path' | 'tag';
  readonly tag: 'all' | 'p0' | 'p1';
  readonly mode: 'stale' | 'expire';
  readonly regenerate: boolean;
  /**
   * It dies right after its n-th write that took effect, and its caller retries it with the same
   * Idempotency-Key (the same effect, by a new actor `<actor>r`) once it is dead.
   */
  readonly crashAfterWrites?: number | undefined;
  /** Multi-tenant runs: which tenant it is for (an index into the run's tenants). */
  readonly tenant?: number | undefined;
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
  /** The run's tenants (`[undefined]` single-tenant): a revalidation is for one of them. */
  readonly tenants: readonly (string | undefined)[];
  /** A key and the variants of it the run asks for: what a path revalidation covers. */
  readonly pagesOf: (key: CacheKey) => readonly CacheKey[];
  readonly tableName: string;
  readonly bucket: string;
  readonly deployId: string;
  readonly clientsOf: (actor: string, faults: ActorFaults) => AwsClients;
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

/**
 * Starts every revalidation and hold of the plan on the interleaver. @returns their actor names
 * (the retries' too, as they start) and `poke`: starts the retry of each revalidation that died
 * as planned (its caller's retry with the same Idempotency-Key), let run to its first gate
 */
export function startWriters(
  ctx: WriterContext,
  plan: { revalidations: readonly RevalidationPlan[]; holds: readonly HoldPlan[] },
): { actors: string[]; poke(): boolean } {
  const actors: string[] = [];
  const retried = new Set<string>();
  plan.revalidations.forEach((revalidation, index) => {
    const actor = `v${index}`;
    actors.push(actor);
    void ctx.interleaver.start(actor, () => runRevalidation(ctx, actor, revalidation));
  });
  const poke = () => {
    let started = false;
    plan.revalidations.forEach((revalidation, index) => {
      const actor = `v${index}`;
      if (ctx.interleaver.state(actor) !== 'dead' || retried.has(actor)) return;
      retried.add(actor);
      actors.push(`${actor}r`);
      const retry = { ...revalidation, crashAfterWrites: undefined };
      void ctx.interleaver.start(`${actor}r`, () =>
        runRevalidation(ctx, `${actor}r`, retry, actor),
      );
      started = true;
    });
    return started;
  };
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
        if (holdPlan.release) await release(deps, { cacheKey, actor });
      } catch (error) {
        // Refused (META changed or gone, the lease was taken): nothing was written.
        if (!(error instanceof IsrError) && !isConflict(error)) throw error;
      }
    });
  });
  return { actors, poke };
}

/**
 * DynamoDB refused one of an operator's writes: it met a transaction in flight on the item
 * (transaction-apis.html; the SDK retries none). The command fails and is run again by hand.
 */
export const isConflict = (error: unknown): boolean =>
  error instanceof TransactionConflictException ||
  error instanceof TransactionCanceledException ||
  error instanceof TransactionConflictError;

/**
 * A revalidation as the revalidate function applies it before its 202 (`acceptRevalidation`:
 * the pages named by path marked, each tag's in-progress entries, progress row and first
 * fan-out step written, the wait for origins' cached reads, the CDN purge), wired as
 * `createRevalidateDeps` wires it: DynamoDB rows, the model's queue and CDN, and a clock whose
 * wait is model time. Its request arrives when the schedule says (`revalidate:request`).
 */
async function runRevalidation(
  ctx: WriterContext,
  actor: string,
  plan: RevalidationPlan,
  retryOf?: string,
) {
  await ctx.interleaver.gate(actor, 'revalidate:request');
  // A retry's request began with the first attempt's: what it covers is counted from there.
  const from = retryOf === undefined ? ctx.world.log.length : ctx.world.firstCall.get(retryOf);
  if (from === undefined) throw new Error(`${retryOf ?? actor} never started`);
  ctx.world.firstCall.set(actor, from);
  const clients = ctx.clientsOf(actor, {
    skew: plan.skew,
    crashAfterWrites: plan.crashAfterWrites,
  });
  const tags = plan.by === 'tag' ? [`${ctx.world.tagPrefix}${plan.tag}`] : [];
  const tenant = ctx.tenants[plan.tenant ?? 0];
  const own = keysOfTenant(ctx.keys, tenant);
  const clock = ctx.world.sleepingClockFor(actor, plan.skew, ctx.interleaver);
  const effectId = `rv_${retryOf ?? actor}-${ctx.runId}`;
  ctx.effectIds.add(effectId);
  const purger = purgerFor(ctx.cdn, actor, clients.dynamodb, ctx.tableName, clock, ctx.mutation);
  let purgeId: string | undefined;
  const cdn: CdnInvalidator = {
    invalidateTags: (own, options) => {
      // Negative control: the purge names the other tenant's tags (caught on the wire).
      const cdnTags = ctx.mutation === 'tenant-crossed-purge' ? crossedCdnTags(own) : own;
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
      ...mutated(ctx.mutation, clients.dynamodb, deps.revalidation.tagIndex),
    },
    {
      tenant,
      keys: plan.by === 'path' ? [own[0]] : [],
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
  const pages = plan.by === 'path' ? ctx.pagesOf(own[0]) : own.flatMap(ctx.pagesOf);
  const pks = pages.map((page) => page.pk);
  const mode = plan.mode;
  const whose = tenant === undefined ? {} : { tenant };
  ctx.world.log.push({ kind: 'revalidated', actor, from, pks, tags, mode, ...whose, purgeId });
}

/** The revalidate function's guards a negative control removes. */
function mutated(
  mutation: string,
  client: DynamoDBClient,
  tagIndex: TagRevalidations,
): { inProgressCacheMs?: number; tagIndex?: TagRevalidations } {
  // A tag's revalidation time recorded under the other tenant (the tenant crossed on its row).
  if (mutation === 'tenant-crossed-tag-times') return { tagIndex: crossedTagTimes(tagIndex) };
  // The accept records no time for a path's variant tag (issue 33, fix 1 undone): a variant's
  // first render in flight then publishes what it rendered before the 202 as fresh.
  if (mutation === 'no-variant-tag-time') {
    const recordRevalidation: TagRevalidations['recordRevalidation'] = (tenant, tag, at) =>
      tag.startsWith('isr-variants:')
        ? Promise.resolve()
        : tagIndex.recordRevalidation(tenant, tag, at);
    return {
      tagIndex: new Proxy(tagIndex, {
        get: (target, property) => {
          if (property === 'recordRevalidation') return recordRevalidation;
          const value: unknown = Reflect.get(target, property);
          return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
        },
      }),
    };
  }
  // The fan-outs start without their in-progress entries (the shards' updates dropped).
  if (mutation === 'no-in-progress-entries') withoutEntries(client);
  // The 202 does not wait for origins' cached reads of the rows to run out.
  if (mutation === 'no-in-progress-wait') return { inProgressCacheMs: 0 };
  return {};
}

/** Drops every in-progress shard's update from the transactions `client` sends. */
function withoutEntries(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as TransactWriteItemsCommandInput;
      if (input.TransactItems !== undefined) {
        input.TransactItems = input.TransactItems.filter(
          (item) => item.Update?.Key?.pk?.S?.startsWith(IN_PROGRESS_PREFIX) !== true,
        );
      }
      return next(args);
    },
    { step: 'initialize', name: 'no-in-progress-entries' },
  );
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
          Key: keyOf(tagPartition(tenantOfPk(pk), tag), `${PAGE}${pk}`),
          ConsistentRead: true,
        }),
      );
      if (Item === undefined)
        return `${pk} carries tag ${tag}, but the tag index has no row for it`;
    }
  }
  return undefined;
}
