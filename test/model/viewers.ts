/**
 * Viewers as model-check actors: origin requests for a key, each arriving when the schedule
 * says, served by the real origin use case (`servePage`) in one of two containers that reuse
 * their read of the in-progress rows as the origin does (`InProgressReader`); and the answer
 * each got, as the invariants read it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoRevalidationsInProgress } from '../../lambda/adapters/revalidations-in-progress/dynamodb.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import { epochSeconds } from '../../lambda/core/clock.js';
import type { RevalidationsInProgress } from '../../lambda/core/page/ports.js';
import { InProgressReader } from '../../lambda/core/page/in-progress.js';
import type { PageResponse } from '../../lambda/core/serve/responses.js';
import { servePage } from '../../lambda/core/serve/serve.js';
import type { OriginDeps } from '../../lambda/core/serve/request.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import type { OriginConfig } from '../../lambda/shared/config.js';
import type { Interleaver } from './interleaver.js';
import type { OriginPlan } from './plan.js';
import type { ActorFaults, World } from './world.js';

/** A viewer's answer as the log keeps it: the body it got (a 200's), how, from where it began. */
export function servedEvent(
  actor: string,
  key: CacheKey,
  began: { readonly from: number; readonly now: number },
  response: PageResponse,
) {
  const content =
    response.status === 200 && response.body !== undefined
      ? new TextDecoder().decode(response.body)
      : undefined;
  return {
    kind: 'served' as const,
    actor,
    pk: key.pk,
    ...began,
    content,
    cache: response.cacheStatus,
  };
}

/** The header a variant request carries (the model's service keys on `rsc`, as Next.js's). */
export const VARIANT_HEADERS = { rsc: '1' } as const;

/** A viewer's GET of `key`, or of its RSC variant. */
export const getOf = (key: CacheKey, variant = false) => ({
  method: 'GET',
  rawPath: key.path,
  rawQueryString: '',
  tenant: key.tenant,
  ifNoneMatch: undefined,
  ...(variant ? { variantHeaders: VARIANT_HEADERS } : {}),
});

/** A viewer request's read of the in-progress rows that fails, as the plan says. */
export class InProgressReadFailed extends Error {
  override readonly name = 'InProgressReadFailed';
}

export interface ViewerContext {
  readonly world: World;
  readonly interleaver: Interleaver;
  readonly keys: readonly CacheKey[];
  /** The key of a page's RSC variant. */
  readonly variantOf: (key: CacheKey) => CacheKey;
  readonly originConfig: OriginConfig;
  readonly tableName: string;
  readonly clientsOf: (actor: string, faults: ActorFaults) => AwsClients;
  readonly origin: (actor: string, faults: ActorFaults, reader: InProgressReader) => OriginDeps;
  /** A guard removed for a negative control (`none` otherwise). */
  readonly mutation: string;
}

/**
 * Which viewer request is reading the in-progress rows (its own gated client). One for the
 * process, never one per run: Node keeps every AsyncLocalStorage ever created on each new
 * promise's path, so one per run made every later run slower (a 1,000-run check never ended).
 */
const caller = new AsyncLocalStorage<RevalidationsInProgress>();

/**
 * The plan's viewers: each request arrives when the schedule releases its `viewer:request` gate
 * (where it begins, for the invariants), in one of two containers. A container serves one
 * request at a time, so its requests start one after another (and a request that crashed takes
 * its container with it: the next starts in a new one). A container's reader is built as
 * `createOriginDeps` builds it (its shards and cache time, on the container's clock); its
 * GetItem goes through the client of the request that makes it, so it waits at that gate.
 * @returns `poke`: starts the next request of each container whose last one crashed
 */
export function startViewers(
  ctx: ViewerContext,
  origins: readonly OriginPlan[],
): { poke(): boolean } {
  const rows: RevalidationsInProgress = {
    end: () => Promise.reject(new Error('an origin only reads the in-progress rows')),
    read: (tenant, shard) => {
      const own = caller.getStore();
      if (own === undefined) throw new Error('an in-progress read outside a viewer request');
      const state = own.read(tenant, shard);
      // Negative control: a failed read taken for "nothing in progress" (failing open).
      return ctx.mutation === 'in-progress-fails-open' ? state.catch(() => new Map()) : state;
    },
  };
  const shards = ctx.originConfig.revalidationShards;
  // A deployed container picks its shard at random when it starts; container c reads shard c
  // here, so a run replays the same way (and the invariants check every shard after each step).
  const newReader = (skew: number, container: number) =>
    new InProgressReader(
      { rows, shards, cacheMs: ctx.originConfig.inProgressCacheMs },
      ctx.world.clockFor(skew),
      () => ((container % shards) + 0.5) / shards,
    );
  const containers = [0, 1].map((container) => {
    const requests = origins
      .map((plan, index) => ({ plan, actor: `o${index}` }))
      .filter(({ plan }) => plan.container === container);
    const skew = requests[0]?.plan.skew ?? 0;
    const reader = newReader(skew, container);
    return { container, requests, skew, reader, current: undefined as string | undefined };
  });
  const startNext = (container: (typeof containers)[number]) => {
    const next = container.requests.shift();
    container.current = next?.actor;
    if (next === undefined) return;
    const { plan, actor } = next;
    const faults = { ...plan, skew: container.skew };
    const deps = ctx.origin(actor, faults, container.reader);
    // The request's own gated client: its read of the rows waits at its gate like its calls.
    const own = failingAsPlanned(
      new DynamoRevalidationsInProgress({
        client: ctx.clientsOf(actor, faults).dynamodb,
        tableName: ctx.tableName,
      }),
      plan,
    );
    const key = ctx.keys[plan.key % ctx.keys.length];
    const page = plan.variant === true ? ctx.variantOf(key) : key;
    void ctx.interleaver
      .start(actor, async () => {
        await ctx.interleaver.gate(actor, 'viewer:request');
        const from = ctx.world.log.length;
        ctx.world.firstCall.set(actor, from);
        const now = epochSeconds(deps.clock);
        // A failed read of the rows is answered 503 (`servePage`): no body, never the page.
        const request = getOf(key, plan.variant === true);
        const response = await caller.run(own, () => servePage(deps, request));
        ctx.world.log.push(servedEvent(actor, page, { from, now }, response));
      })
      .then(() => startNext(container));
  };
  for (const container of containers) startNext(container);
  return {
    poke: () => {
      let started = false;
      for (const container of containers) {
        const current = container.current;
        if (current === undefined || ctx.interleaver.state(current) !== 'dead') continue;
        container.reader = newReader(container.skew, container.container);
        startNext(container);
        started = true;
      }
      return started;
    },
  };
}

/** The request's rows, whose read fails after its gate when the plan says so. */
function failingAsPlanned(
  rows: RevalidationsInProgress,
  plan: OriginPlan,
): RevalidationsInProgress {
  if (plan.failInProgressRead !== true) return rows;
  return {
    end: (...args) => rows.end(...args),
    read: async (tenant, shard) => {
      await rows.read(tenant, shard); // it reaches DynamoDB (and its gate) first
      throw new InProgressReadFailed('the in-progress read failed (injected)');
    },
  };
}
