/**
 * One model-check run: a generated plan of deliveries (with duplicates, skew and faults), origin
 * requests, revalidations and the fan-out steps they queue, interleaved by a generated schedule
 * against the real code; then the faults stop, every fan-out step still queued is delivered (a
 * stalled fan-out resent by the sweeper) and every unfinished intent is redelivered; then the
 * invariants are checked. Each kind of actor has its own file (`messages.ts`, `viewers.ts`,
 * `writers.ts`, `rollbacks.ts`, `sweeper.ts`, `fan-out.ts`), wired by `actors.ts`; the
 * schedule is `schedule.ts`, the quiet phase `quiet.ts`.
 */
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import type { RegenerationIntent } from '../../lambda/core/page/intent.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import { wireActors, type RunScope } from './actors.js';
import { InvariantViolation, START, tenantContext, type ModelContext } from './context.js';
import { checkFanOutsDone, FanOutDeliveries } from './fan-out.js';
import { Interleaver } from './interleaver.js';
import { checkLog, logDigest, normalisedLog } from './log-checks.js';
import { startMessages } from './messages.js';
import {
  checkLiveBody,
  checkStartedRequestsCanFinish,
  metasOf,
  observerFor,
  passMarksOf,
} from './observer.js';
import type { Mutation, Plan } from './plan.js';
import { FakeSqs } from './queue.js';
import { checkPassMarks, checkViewers } from './revalidation-checks.js';
import { startRollbacks } from './rollbacks.js';
import { checkRevalidations, runSchedule } from './schedule.js';
import { runKeys, seed } from './setup.js';
import { settleQuietly } from './quiet.js';
import { checkPurges, clearRunRows, FakeCdn, startSweepers } from './sweeper.js';
import { checkServedTenants, TenantWatch, tenantsOf } from './tenants.js';
import { startViewers, VARIANT_HEADERS } from './viewers.js';
import { checkTagIndex, startWriters } from './writers.js';
import { World } from './world.js';

export { InvariantViolation, modelContext, type ModelContext } from './context.js';
export { checkLog, logDigest, normalisedLog } from './log-checks.js';
export {
  planArbitrary,
  tenantPlans,
  type DeliveryPlan,
  type MessagePlan,
  type Mutation,
  type OriginPlan,
  type Plan,
  type RollbackPlan,
  type Step,
} from './plan.js';

export async function runPlan(
  singleTenant: ModelContext,
  plan: Plan,
  mutation: Mutation = 'none',
): Promise<{ readonly digest: string; readonly log: string }> {
  // Multi-tenant plans: two tenants with the same paths, each actor for one of them.
  const context = plan.tenants === true ? tenantContext(singleTenant) : singleTenant;
  const tenants = tenantsOf(context);
  const { runId, keys } = runKeys(plan.keys, context, tenants);
  // The RSC variants of the pages, when a viewer asks for one: pages the checks look at too.
  const variantOf = (key: CacheKey) =>
    normaliseCacheKey(
      { tenant: key.tenant, rawPath: key.path, variantHeaders: VARIANT_HEADERS },
      context.originConfig.keyPolicy,
    );
  const variants = plan.origins.some((origin) => origin.variant === true);
  const pagesOf = (key: CacheKey) => (variants ? [key, variantOf(key)] : [key]);
  const pages = keys.flatMap(pagesOf);
  const world = new World(context.endpoints, START);
  world.tagPrefix = `model-${runId}-`; // `model-<run id>` is normalised in the digest
  const interleaver = new Interleaver();
  world.holdTransactions = plan.conflicts === true;
  world.passRenders = plan.passRenders ?? 0;
  const observer = observerFor(context);
  const tenantWatch = plan.tenants === true ? new TenantWatch() : undefined;
  const destroyers = [observer.destroy];
  const scope: RunScope = { context, world, interleaver, mutation, tenantWatch, destroyers };
  // A viewer acts for its key's tenant, a revalidation (and its retry) for its plan's.
  plan.origins.forEach((origin, index) => {
    const tenant = keys[origin.key % keys.length].tenant;
    if (tenant !== undefined) tenantWatch?.expect(`o${index}`, tenant);
  });
  plan.revalidations.forEach((revalidation, index) => {
    const tenant = tenants[revalidation.tenant ?? 0];
    if (tenant === undefined) return;
    tenantWatch?.expect(`v${index}`, tenant);
    tenantWatch?.expect(`v${index}r`, tenant);
  });
  // A hold and a rollback act on the first key's page, for its tenant.
  plan.holds.forEach((_, index) => tenantWatch?.expect(`h${index}`, keys[0].tenant));
  plan.rollbacks.forEach((_, index) => tenantWatch?.expect(`r${index}`, keys[0].tenant));
  try {
    const shards = context.originConfig.revalidationShards;
    await clearRunRows(observer.dynamodb, observer.tableName, shards, tenants);
    const cdn = new FakeCdn(plan.cdn, world.log, interleaver, tenantWatch);
    const seeded = await seed(world, interleaver, context, keys[0]);
    const queued: RegenerationIntent[] = [];
    const sqs = new FakeSqs(world, interleaver, queued);
    scope.destroyers.push(() => sqs.destroy());
    /** Every revalidation's effect id, and the pages each found with META when marking. */
    const effectIds = new Set<string>();
    const found = new Map<string, Set<string>>();
    const keyPks = new Set(keys.map((key) => key.pk));
    const actors = wireActors(scope, { queued, sqs, fanOut: plan.fanOut, found, keyPks });
    const { clientsOf } = actors;
    const deliveries = new FanOutDeliveries({
      world,
      interleaver,
      sqs,
      plan: plan.fanOut,
      workerFor: actors.fanOutWorker,
    });
    const messages = startMessages(scope, actors, { runId, keys, seeded, plans: plan.messages });
    const { tableName, bucket, deployId } = context.workerConfig;
    const viewers = startViewers(
      {
        world,
        interleaver,
        keys,
        variantOf,
        originConfig: context.originConfig,
        tableName,
        clientsOf,
        origin: actors.origin,
        mutation,
      },
      plan.origins,
    );
    const rollbacks = startRollbacks(scope, actors, keys[0], plan.rollbacks);
    const writers = startWriters(
      {
        world,
        interleaver,
        keys,
        tenants,
        pagesOf,
        tableName,
        bucket,
        deployId,
        clientsOf,
        runId,
        revalidateConfig: context.revalidateConfig,
        sqs,
        effectIds,
        marksOf: actors.marksOf,
        cdn,
        mutation,
      },
      plan,
    );
    const sweepers = startSweepers(
      {
        log: world.log,
        interleaver,
        keys: pages,
        tableName,
        bucket,
        cdn,
        clientsOf,
        clockFor: (skew) => world.clockFor(skew),
        sqs,
        mutation,
      },
      plan.sweeps,
    );

    // Chaos: the schedule picks who moves next and when time jumps.
    const pokes = [() => deliveries.start(), () => viewers.poke(), () => writers.poke()];
    const sweeperActors = new Set(sweepers);
    const rows = { rows: undefined, fresh: true };
    const schedule = { scope, observer, keys: pages, sweeperActors, pokes, rows };
    await runSchedule(schedule, plan.schedule);
    for (const actor of [
      ...sweepers,
      ...messages.actors,
      ...plan.origins.map((_, i) => `o${i}`),
      ...rollbacks,
      ...writers.actors,
      ...deliveries.actors(),
    ]) {
      const error = interleaver.errorOf(actor);
      if (error !== undefined)
        throw new InvariantViolation(
          `${actor} threw: ${error instanceof Error ? error.stack : JSON.stringify(error)}`,
        );
    }

    const quiet = { scope, actors, observer, keys, runId, sqs, deliveries, effectIds, messages };
    const next = await settleQuietly({ ...quiet, queued });

    checkLog(world.log);
    await checkRevalidations({ scope, observer, keys: pages });
    const viewed = checkViewers(world.log);
    if (viewed !== undefined) throw new InvariantViolation(viewed);
    const finished = await checkFanOutsDone(observer.statuses, observer.inProgress, {
      effectIds,
      found,
      shards,
      tagPrefix: world.tagPrefix,
      tenants,
    });
    if (finished !== undefined) throw new InvariantViolation(finished);
    if (deliveries.problems.length > 0) throw new InvariantViolation(deliveries.problems[0]);
    const metas = await metasOf(observer, pages);
    const tagged = await checkTagIndex(observer.dynamodb, observer.tableName, metas);
    if (tagged !== undefined) throw new InvariantViolation(tagged);
    const passing = checkPassMarks(world.log, await passMarksOf(observer, pages));
    if (passing !== undefined) throw new InvariantViolation(passing);
    const lost = await checkPurges(observer.dynamodb, observer.tableName, world.log, cdn);
    if (lost !== undefined) throw new InvariantViolation(lost);
    for (const [id, list] of messages.reports) {
      const dead = list.find((report) => report.action === 'dead-letter');
      if (dead !== undefined)
        throw new InvariantViolation(`${id} was dead-lettered: ${JSON.stringify(dead)}`);
    }
    await checkStartedRequestsCanFinish(observer, pages, world.trueTime, async (messageId) => {
      const message = messages.messages.find((candidate) => candidate.id === messageId);
      if (message === undefined) throw new InvariantViolation(`REQ#${messageId} names no message`);
      return messages.redeliver(next(), message, 99);
    });
    const publishes = world.log.filter((event) => event.kind === 'publish');
    await checkLiveBody(world.log, publishes, observer);
    // A tenant never reads, marks, purges or passes another tenant's rows or pages.
    const crossed = tenantWatch?.problems[0] ?? (tenantWatch && checkServedTenants(world.log));
    if (crossed !== undefined) throw new InvariantViolation(crossed);
    return { digest: logDigest(world.log), log: normalisedLog(world.log) };
  } catch (error) {
    // ISR_MODEL_DUMP=1: the failing run's event log, to read what led to the violation.
    if (process.env.ISR_MODEL_DUMP === '1') console.error(normalisedLog(world.log));
    throw error;
  } finally {
    for (const destroy of scope.destroyers) destroy();
  }
}
