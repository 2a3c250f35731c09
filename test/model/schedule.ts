/**
 * The chaos phase of a run: the schedule picks which waiting call goes next, runs one actor up
 * to its n-th write, or jumps time; after every released call the invariants that must hold at
 * every moment are checked (what a sweeper deleted, what a 202 promises, the live bodies, the
 * tag index), and actors a step brought about (deliveries, a crashed container's next request,
 * a revalidation's retry) are started.
 */
import type { CacheKey } from '../../lambda/core/page/model.js';
import type { RunScope } from './actors.js';
import { InvariantViolation } from './context.js';
import type { Interleaver } from './interleaver.js';
import { checkLiveBody, metasOf, type Observer } from './observer.js';
import type { InProgressState } from '../../lambda/core/page/in-progress.js';
import type { Step } from './plan.js';
import { checkRows } from './revalidation-checks.js';
import { checkRetired } from './sweeper.js';
import { tenantOfPk, tenantsOf } from './tenants.js';
import { checkTagIndex } from './writers.js';
import { WRITES } from './world.js';

/** Calls after which the tag index is checked: they publish, expire or (un)index a page. */
const TAG_WRITES = new Set([
  'dynamodb:DeleteItemCommand',
  'dynamodb:TransactWriteItemsCommand',
  'dynamodb:BatchWriteItemCommand',
]);
/** The second gate of a transaction held ongoing: releasing it sends the transaction. */
const ONGOING = ':ongoing';
/** A `run` step releases at most this many calls: an actor retrying in a loop still yields. */
const MAX_RUN_CALLS = 60;

export interface ScheduleContext {
  readonly scope: RunScope;
  readonly observer: Observer;
  readonly keys: readonly CacheKey[];
  readonly sweeperActors: ReadonlySet<string>;
  /** Start the actors a step brought about; each says whether it started one. */
  readonly pokes: readonly (() => boolean)[];
  /** The rows the 202 invariant read last, and whether the last call may have changed them. */
  readonly rows: { rows: RowsRead | undefined; fresh: boolean };
}

/** The rows `checkRevalidations` last read: still what the table holds until the next write. */
interface RowsRead {
  metas: Awaited<ReturnType<typeof metasOf>>;
  /** Each tenant's shards (`undefined`: single-tenant). */
  states: Map<string | undefined, InProgressState[]>;
}

/**
 * The 202 invariant on the rows, now: read only once a revalidation has answered. `reuse`: the
 * rows read last time, when no call since could have written (the log and time still move on).
 */
export async function checkRevalidations(
  ctx: Omit<ScheduleContext, 'pokes' | 'sweeperActors' | 'rows'>,
  reuse?: { rows: RowsRead | undefined; fresh: boolean },
) {
  const { world, context } = ctx.scope;
  if (!world.log.some((event) => event.kind === 'revalidated')) return;
  const shards = context.originConfig.revalidationShards;
  let rows = reuse?.fresh === false ? reuse.rows : undefined;
  if (rows === undefined) {
    const states = new Map<string | undefined, InProgressState[]>();
    for (const tenant of tenantsOf(context)) {
      const reads = Array.from({ length: shards }, (_, shard) =>
        ctx.observer.inProgress.read(tenant, shard),
      );
      states.set(tenant, await Promise.all(reads));
    }
    rows = { metas: await metasOf(ctx.observer, ctx.keys), states };
    if (reuse !== undefined) reuse.rows = rows;
  }
  const { states } = rows;
  const violation = checkRows(world.log, rows.metas, (pk) => states.get(tenantOfPk(pk)) ?? [], {
    nowSeconds: world.trueTime,
    marginSeconds: context.originConfig.clockSkewMarginSeconds,
  });
  if (violation !== undefined) throw new InvariantViolation(violation);
}

/** After one released call: the bodies it touched, what a sweeper deleted, the 202s so far. */
async function afterStep(ctx: ScheduleContext, before: number, gate: string): Promise<void> {
  // A transaction held ongoing (`World.conflicts`) is sent when its second gate is released.
  const label = gate.endsWith(ONGOING) ? gate.slice(0, -ONGOING.length) : gate;
  const { world, interleaver } = ctx.scope;
  const { observer } = ctx;
  const fresh = world.log.slice(before);
  for (const event of fresh) {
    if (event.kind !== 'retire' || !ctx.sweeperActors.has(event.actor)) continue;
    const violation = await checkRetired(observer.dynamodb, observer.tableName, world.log, event);
    if (violation !== undefined) throw new InvariantViolation(violation);
  }
  // Only a write changes the rows (every call of every actor waits at a gate, one at a time).
  ctx.rows.fresh = WRITES.has(label);
  await checkRevalidations(ctx, ctx.rows);
  await checkLiveBody(world.log, fresh, observer);
  // A step sent is delivered as the plan says (a crashed one again), and a container whose
  // request crashed serves its next: new actors, let run to their first gate.
  const started = ctx.pokes.map((poke) => poke());
  if (started.some(Boolean)) await interleaver.settle();
  // The tag index covers META's tags at every moment, not just at the end (a later render
  // may change the tags back and hide a lost row).
  if (TAG_WRITES.has(label)) {
    const metas = await metasOf(observer, ctx.keys);
    const untagged = await checkTagIndex(observer.dynamodb, observer.tableName, metas);
    if (untagged !== undefined) throw new InvariantViolation(untagged);
  }
}

/** Runs the schedule, then every call still waiting in order, checking after each. */
export async function runSchedule(ctx: ScheduleContext, schedule: readonly Step[]): Promise<void> {
  const { world, interleaver } = ctx.scope;
  await interleaver.settle();
  for (const step of schedule) {
    if (!interleaver.hasWaiting()) break;
    if ('advance' in step) {
      world.trueTime += step.advance;
      continue;
    }
    const picks = 'pick' in step ? [step.pick] : runOf(interleaver, step);
    for (const pick of picks) {
      const before = world.log.length;
      const { label } = await interleaver.step(pick);
      await afterStep(ctx, before, label);
    }
  }
  while (interleaver.hasWaiting()) {
    const before = world.log.length;
    const { label } = await interleaver.step(0);
    await afterStep(ctx, before, label);
  }
}

/**
 * The picks of a `run` step, one at a time (each computed once the previous call settled): the
 * actor's next call, until it has made `writes` writes or waits no more.
 */
function* runOf(
  interleaver: Interleaver,
  step: { readonly run: string | number; readonly writes: number },
): Generator<number> {
  const actors = [...new Set(interleaver.waiting().map((gate) => gate.actor))];
  const actor = typeof step.run === 'string' ? step.run : actors[step.run % actors.length];
  let writes = 0;
  for (let calls = 0; writes < step.writes && calls < MAX_RUN_CALLS; calls++) {
    const waiting = interleaver.waiting();
    const index = waiting.findIndex((gate) => gate.actor === actor);
    if (index < 0) return;
    if (WRITES.has(waiting[index].label)) writes += 1;
    yield index;
  }
}
