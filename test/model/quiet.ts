/**
 * The quiet phase of a run: the faults stop, every lease and REQ# claim runs out, every fan-out
 * step still queued is delivered (a stalled fan-out resent by the sweeper), and unfinished
 * intents are delivered again, and each page asked for once more, until every page is fresh.
 */
import { epochSeconds } from '../../lambda/core/clock.js';
import { needsNoRegeneration } from '../../lambda/core/page/freshness.js';
import { encodeIntent, type RegenerationIntent } from '../../lambda/core/page/intent.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import { resumeStalledFanOuts } from '../../lambda/core/revalidate/fan-out.js';
import { servePage } from '../../lambda/core/serve/serve.js';
import type { Actors, RunScope } from './actors.js';
import { InvariantViolation } from './context.js';
import { progressRowsOf, type FanOutDeliveries } from './fan-out.js';
import type { Messages } from './messages.js';
import { checkLiveBody, passMarksOf, type Observer } from './observer.js';
import { MAX_REMAINING_MS, MAX_SKEW_SECONDS } from './plan.js';
import type { FakeSqs } from './queue.js';
import { FAN_OUT_STALLED_SECONDS, fanOutSweepDeps } from './sweeper.js';
import { getOf, servedEvent } from './viewers.js';
import { LEASE_SECONDS } from './world.js';

export interface QuietContext {
  readonly scope: RunScope;
  readonly actors: Actors;
  readonly observer: Observer;
  readonly keys: readonly CacheKey[];
  readonly runId: string;
  readonly sqs: FakeSqs;
  readonly deliveries: FanOutDeliveries;
  readonly effectIds: ReadonlySet<string>;
  readonly messages: Messages;
  /** The intents origins queued (taken as they are delivered). */
  readonly queued: RegenerationIntent[];
}

/** Quiet actors' names: `q0`, `q1`... */
export type QuietNames = () => string;

/** Lets the faults stop and the run settle. @returns the namer of further quiet actors */
export async function settleQuietly(ctx: QuietContext): Promise<QuietNames> {
  const { world } = ctx.scope;
  // Every lease runs out (a lease taken by a clock running fast lasts up to the lease plus the
  // largest skew) and, as SQS's visibility timeout (>= 6x the function timeout) guarantees, a
  // redelivery comes only after a crashed invocation's time is up, so its REQ# claim has run
  // out too. Then unfinished intents are redelivered until done.
  world.trueTime +=
    Math.max(LEASE_SECONDS, Math.ceil(MAX_REMAINING_MS / 1000)) + MAX_SKEW_SECONDS + 1;
  let quiet = 0;
  const next = () => `q${quiet++}`;
  await finishFanOuts(ctx, next);
  await redeliverUntilFresh(ctx, next);
  return next;
}

/**
 * Every fan-out step still queued is delivered; a fan-out still unfinished has stalled (a step
 * dropped, or crashed after moving the cursor): the sweeper resends it once it is.
 */
async function finishFanOuts(ctx: QuietContext, next: QuietNames): Promise<void> {
  const { world, mutation } = ctx.scope;
  const { observer } = ctx;
  for (let round = 0; ; round++) {
    await ctx.deliveries.deliverQuietly(next);
    const left = await progressRowsOf(observer.dynamodb, observer.tableName, ctx.effectIds);
    if (left.length === 0) return;
    if (round >= 3) {
      throw new InvariantViolation(
        `a fan-out never finished, resent by the sweeper ${round} times: ${left.join('; ')}`,
      );
    }
    world.trueTime += FAN_OUT_STALLED_SECONDS + 2 * MAX_SKEW_SECONDS + 1;
    const actor = next();
    const sweep = { tableName: observer.tableName, sqs: ctx.sqs, mutation };
    const clients = ctx.actors.clientsOf(actor, { skew: 0 });
    const resume = fanOutSweepDeps(sweep, actor, clients, world.clockFor(0));
    await resumeStalledFanOuts(resume, resume);
  }
}

/**
 * Multi-tenant runs pass a key marked for pass to the upstream until its mark ends (single-tenant
 * ones have no upstream and render it): a key with a mark and no META waits the mark out.
 */
async function waitOutPasses(ctx: QuietContext, metas: readonly unknown[]): Promise<void> {
  const { world, context } = ctx.scope;
  if (ctx.scope.tenantWatch === undefined) return;
  const marks = await passMarksOf(ctx.observer, ctx.keys);
  if (ctx.keys.some((key, index) => metas[index] === undefined && marks.get(key.pk) === true)) {
    world.trueTime += context.workerConfig.hitForPassSeconds + 2 * MAX_SKEW_SECONDS + 1;
  }
}

/** Unfinished intents delivered again, and every page asked for, until all are fresh. */
async function redeliverUntilFresh(ctx: QuietContext, next: QuietNames): Promise<void> {
  const { world } = ctx.scope;
  const { observer, keys, messages } = ctx;
  for (let round = 0; ; round++) {
    for (const message of messages.messages.filter(({ id }) => !messages.done(id))) {
      const before = world.log.length;
      await messages.redeliver(next(), message);
      await checkLiveBody(world.log, world.log.slice(before), observer);
    }
    for (const key of keys) {
      const actor = next();
      const deps = ctx.actors.origin(actor, { skew: 0 });
      const from = world.log.length;
      const now = epochSeconds(deps.clock);
      const response = await servePage(deps, getOf(key));
      world.log.push(servedEvent(actor, key, { from, now }, response));
    }
    for (const intent of ctx.queued.splice(0)) {
      const id = `queued${messages.messages.length}-${ctx.runId}`;
      messages.messages.push({ id, body: encodeIntent(intent) });
    }
    const metas = await Promise.all(
      keys.map((key) => observer.table.getMeta(key.pk, { consistent: true })),
    );
    // A held page stays stale until its hold ends: that is the hold working.
    const allFresh = metas.every(
      (meta) => meta !== undefined && needsNoRegeneration(meta, world.trueTime),
    );
    if (allFresh && messages.messages.every((message) => messages.done(message.id))) return;
    await waitOutPasses(ctx, metas);
    if (round >= 40) {
      throw new InvariantViolation(
        `not settled after the faults stopped: ${JSON.stringify({ metas, reports: [...messages.reports] })}`,
      );
    }
  }
}
