/**
 * The table's other writers as model-check actors (issue 19): revalidations (by path or by tag,
 * `stale` or `expire`, with or without `regenerate`) and an operator's hold, maybe released; and
 * the invariants they must keep: the tag index covers every tag of every META, and after a
 * revalidation's 202 no page it covers is fresh with a generation rendered before it began
 * (a held or rolled-back page aside). Revalidations go through the use case's public entry,
 * `revalidate`, so its implementation can change underneath.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { DynamoRevalidationMarks } from '../../lambda/adapters/revalidation-marks/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { PAGE, tagPartition } from '../../lambda/adapters/tag-index/dynamodb.js';
import { DynamoTagRevalidations } from '../../lambda/adapters/tag-revalidations/dynamodb.js';
import { keyOf } from '../../lambda/adapters/shared/dynamodb/items.js';
import type { CacheKey } from '../../lambda/core/cache-key.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import { CdnPurgeRejectedError, IsrError } from '../../lambda/core/errors.js';
import { purgeIdOf, purgeTagsOf } from '../../lambda/core/cdn-purge.js';
import { isFresh, isHeld } from '../../lambda/core/freshness.js';
import type { RegenerationIntent } from '../../lambda/core/intent.js';
import { hold, release } from '../../lambda/core/operate/rollback.js';
import type { CacheMeta, CdnInvalidator, RevalidationMarks } from '../../lambda/core/ports.js';
import {
  revalidate,
  type Revalidation,
  type RevalidationDeps,
} from '../../lambda/core/revalidate/revalidation.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import type { Interleaver } from './interleaver.js';
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
    { maxLength: 1 },
  ),
  holds: fc.array(fc.record({ skew, release: fc.boolean() }), { maxLength: 1 }),
});

interface WriterWorld {
  readonly log: ModelEvent[];
  readonly tagPrefix: string;
  trueTime: number;
  clockFor(skew: number): Clock;
}

export interface WriterContext {
  readonly world: WriterWorld;
  readonly interleaver: Interleaver;
  readonly keys: readonly CacheKey[];
  readonly tableName: string;
  readonly bucket: string;
  readonly deployId: string;
  readonly clientsOf: (actor: string, faults: { skew: number }) => AwsClients;
  /** Intents a revalidation queued: delivered once the faults stop. */
  readonly queued: RegenerationIntent[];
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
 * The one place the model calls the revalidation core: a revalidation's effect, as the endpoint
 * applies it before its 202. Swap this when the core's entry changes (a background fan-out).
 */
export const applyRevalidation = (deps: RevalidationDeps, input: Revalidation) =>
  revalidate(deps, input);

async function runRevalidation(ctx: WriterContext, actor: string, plan: RevalidationPlan) {
  const clients = ctx.clientsOf(actor, { skew: plan.skew });
  const tables = { client: clients.dynamodb, tableName: ctx.tableName };
  const from = ctx.world.log.length;
  const tags = plan.by === 'tag' ? [`${ctx.world.tagPrefix}${plan.tag}`] : [];
  const clock = ctx.world.clockFor(plan.skew);
  const effectId = `rv_${actor}`;
  const purger = purgerFor(ctx.cdn, actor, clients.dynamodb, ctx.tableName, clock, ctx.mutation);
  let purgeId: string | undefined;
  const cdn: CdnInvalidator = {
    invalidateTags: (cdnTags, options) => {
      purgeId = purgeIdOf(purgeTagsOf(cdnTags), { effectIds: [effectId] });
      return purger.invalidateTags(cdnTags, options);
    },
  };
  const marks = new DynamoRevalidationMarks(tables);
  const answered = await applyRevalidation(
    {
      marks: ctx.mutation === 'expire-spares-held' ? holdBeatsExpire(marks, clock) : marks,
      tagIndex: new DynamoTagRevalidations(tables),
      queue: {
        enqueue: (intent) => {
          ctx.queued.push(intent);
          return Promise.resolve();
        },
        enqueueBatch: (queued) => {
          ctx.queued.push(...queued.map((one) => one.intent));
          return Promise.resolve();
        },
      },
      cdn,
      clock,
      deployId: ctx.deployId,
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

/** Negative control of the `expire` decision: a held page is only marked stale, and stays. */
function holdBeatsExpire(marks: RevalidationMarks, clock: Clock): RevalidationMarks {
  return {
    markLock: (pk, effectId) => marks.markLock(pk, effectId),
    markStale: (pk, input) => marks.markStale(pk, input),
    clearPass: (pk) => marks.clearPass(pk),
    expire: async (pk) => {
      const now = epochSeconds(clock);
      const meta = await marks.markStale(pk, { effectId: 'hold-beats-expire', now });
      return meta !== undefined && isHeld(meta, now) ? meta : marks.expire(pk);
    },
  };
}

/** Where in the log the generation whose body is `s3Key` was rendered (its body, for a seed). */
function renderedAt(log: readonly ModelEvent[], s3Key: string): number {
  const body = log.findIndex((event) => event.kind === 'body' && event.s3Key === s3Key);
  const content = body < 0 ? undefined : (log[body] as { content: string }).content;
  const render = log.findIndex((event) => event.kind === 'render' && event.content === content);
  return render >= 0 ? render : body;
}

/**
 * After a revalidation's 202, no page it covers is fresh with a generation rendered before it
 * began: a page under the path, or one whose META carries the tag. A held page, or one rolled
 * back since, is the exception.
 */
export function checkRevalidated(
  log: readonly ModelEvent[],
  metas: ReadonlyMap<string, CacheMeta | undefined>,
  nowSeconds: number,
): string | undefined {
  for (const [index, event] of log.entries()) {
    if (event.kind !== 'revalidated') continue;
    for (const pk of event.pks) {
      const meta = metas.get(pk);
      if (meta === undefined || !isFresh(meta, nowSeconds) || isHeld(meta, nowSeconds)) continue;
      if (event.tags.length > 0 && !event.tags.some((tag) => meta.tags?.includes(tag))) continue;
      const restored = log
        .slice(event.from)
        .some((later) => later.kind === 'restore' && later.pk === pk);
      const rendered = renderedAt(log, meta.s3Key);
      if (!restored && rendered >= 0 && rendered < event.from) {
        return `after ${event.actor}'s 202 (log ${index}), ${pk} is fresh with ${meta.s3Key}, rendered at log ${rendered} before it began (log ${event.from})`;
      }
    }
  }
  return undefined;
}

/** Where in the log `content` was rendered (a seed's: where its body was written), or -1. */
function contentRenderedAt(log: readonly ModelEvent[], content: string): number {
  const render = log.findIndex((event) => event.kind === 'render' && event.content === content);
  if (render >= 0) return render;
  return log.findIndex((event) => event.kind === 'body' && event.content === content);
}

/**
 * An `expire` is a takedown and beats a hold: once it answered, no viewer request that began
 * after it gets a body rendered before it, held or not (path revalidations: a tag's pages are
 * those that carried it). @returns the first violation
 */
export function checkExpired(log: readonly ModelEvent[]): string | undefined {
  for (const [index, event] of log.entries()) {
    if (event.kind !== 'revalidated' || event.mode !== 'expire' || event.tags.length > 0) continue;
    for (const served of log.slice(index)) {
      if (served.kind !== 'served' || served.content === undefined) continue;
      if (!event.pks.includes(served.pk) || served.from <= index) continue;
      const rendered = contentRenderedAt(log, served.content);
      if (rendered >= 0 && rendered < event.from) {
        return `${served.actor} was served ${JSON.stringify(served.content)} (rendered at log ${rendered}) after ${event.actor}'s expire answered (log ${index})`;
      }
    }
  }
  return undefined;
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
