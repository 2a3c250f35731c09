/**
 * How one run wires its actors as the deployed functions wire themselves (`createWorkerDeps`,
 * `createOriginDeps`): each with its own gated, faulty SDK clients, its skewed clock, the
 * model's queue and batch size, and the guard a negative control removes.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Guard } from '../../lambda/adapters/shared/dynamodb/conditions.js';
import type { Clock } from '../../lambda/core/clock.js';
import type { InProgressReader } from '../../lambda/core/page/in-progress.js';
import type { BodyStore } from '../../lambda/core/page/ports.js';
import type { RegenerationIntent } from '../../lambda/core/page/intent.js';
import type { FanOutMessage } from '../../lambda/core/revalidate/fan-out-message.js';
import type { RevalidationMarks } from '../../lambda/core/revalidate/ports.js';
import { createOriginDeps } from '../../lambda/origin/build.js';
import { createWorkerDeps } from '../../lambda/worker/build.js';
import { lambdaContext } from '../../local/worker-poller.js';
import { removeGuard } from '../helpers/guard-mutation.js';
import type { ModelContext } from './context.js';
import { observedMarks, type FanOutPlan } from './fan-out.js';
import type { Interleaver } from './interleaver.js';
import type { Mutation } from './plan.js';
import type { FakeSqs } from './queue.js';
import { modelPassThrough, type TenantWatch } from './tenants.js';
import { holdBeatsExpire } from './writers.js';
import { sharedKeyBodies, type ActorFaults, type World } from './world.js';

/** What every actor of one run shares. */
export interface RunScope {
  readonly context: ModelContext;
  readonly world: World;
  readonly interleaver: Interleaver;
  readonly mutation: Mutation;
  /** Multi-tenant runs: what each actor sends, watched for another tenant's rows. */
  readonly tenantWatch?: TenantWatch | undefined;
  /** Torn down with the run. */
  readonly destroyers: (() => void)[];
}

/** The guards a negative control removes from every client of the run. */
function guard(mutation: Mutation, client: DynamoDBClient): void {
  if (mutation === 'no-token-condition') removeGuard(client, Guard.leaseToken);
  if (mutation === 'no-free-lease-condition') removeGuard(client, Guard.leaseFree);
  if (mutation === 'no-request-open-condition') removeGuard(client, Guard.requestOpen);
  if (mutation === 'no-tag-meta-condition') removeGuard(client, Guard.tagNotCarried);
  if (mutation === 'no-revalidated-condition') {
    // Every condition by which a publish honours a revalidation's mark, on META and on LOCK.
    for (const mark of [Guard.sameMark, Guard.stillUnmarked, Guard.noMarkSinceAbsent]) {
      removeGuard(client, mark);
    }
    removeGuard(client, Guard.notRevalidated);
  }
  // A step's advance ignores the cursor it read (its finish, a Delete, keeps the condition).
  if (mutation === 'no-cursor-condition') removeGuard(client, '#cursor = :from', ['Update']);
  // A revalidation's retry starts again the fan-out its crashed attempt started.
  if (mutation === 'restart-fan-outs') {
    removeGuard(client, 'NOT contains(started_tags, :s0)', ['Update']);
  }
}

/**
 * The run's actor factories. `queued` collects the intents origins enqueue; `found` the pages
 * each revalidation found with META when marking.
 */
export function wireActors(
  scope: RunScope,
  run: {
    readonly queued: RegenerationIntent[];
    readonly sqs: FakeSqs;
    readonly fanOut: FanOutPlan;
    readonly found: Map<string, Set<string>>;
    /** The pages' own keys (not their variants'). */
    readonly keyPks: ReadonlySet<string>;
  },
) {
  const { context, world, interleaver, mutation } = scope;
  const renderCheck =
    mutation === 'no-render-lease-check' ? { clockSkewMarginSeconds: -Infinity } : {};
  const bodiesOf = (bodies: BodyStore): BodyStore =>
    mutation === 'shared-body-key' ? sharedKeyBodies(bodies) : bodies;

  /** One actor's gated clients, torn down with the run. */
  const clientsOf = (actor: string, faults: ActorFaults) => {
    const clients = world.clientsFor(actor, interleaver, faults);
    guard(mutation, clients.dynamodb);
    scope.tenantWatch?.watch(actor, clients);
    scope.destroyers.push(() => {
      clients.dynamodb.destroy();
      clients.s3.destroy();
    });
    return clients;
  };
  const marksOf = (marks: RevalidationMarks, effectId: string, clock: Clock) => {
    const observed = observedMarks(marks, effectId, run.found);
    if (mutation === 'variants-keep-pass') return variantsKeepPass(observed, run.keyPks);
    return mutation === 'expire-spares-held' ? holdBeatsExpire(observed, clock) : observed;
  };
  const worker = (actor: string, faults: ActorFaults, remainingMs: number, intent: string) => {
    const clients = clientsOf(actor, faults);
    const deps = createWorkerDeps(
      context.workerConfig,
      {
        clients,
        clock: world.clockFor(faults.skew),
        renderer: world.rendererFor(actor, intent),
        owner: actor,
      },
      { warn: () => undefined },
    );
    // The time the invocation has left when it claims REQ#: its in-progress expiry.
    deps.idempotency.config.registerLambdaContext({
      ...lambdaContext(remainingMs, actor),
      getRemainingTimeInMillis: () => remainingMs,
    });
    return {
      ...deps,
      leaseRefreshMs: 3_600_000, // leases run out: time moves only when the schedule says so
      maxReceiveCount: 1_000,
      ...renderCheck,
      bodies: bodiesOf(deps.bodies),
    };
  };
  const origin = (actor: string, faults: ActorFaults, reader?: InProgressReader) => {
    const clients = clientsOf(actor, faults);
    const deps = createOriginDeps(
      context.originConfig,
      {
        clients,
        clock: world.clockFor(faults.skew),
        renderer: world.rendererFor(actor, `origin:${actor}`),
        owner: actor,
        random: world.random,
      },
      { warn: () => undefined },
    );
    return {
      ...deps,
      leaseRefreshMs: 3_600_000,
      missWaitMs: 0,
      ...renderCheck,
      queue: {
        enqueue: (intent: RegenerationIntent) => {
          run.queued.push(intent);
          return Promise.resolve();
        },
      },
      bodies: bodiesOf(deps.bodies),
      // Multi-tenant: the upstream a pass reaches (single-tenant runs have none, as before).
      ...(scope.tenantWatch === undefined
        ? {}
        : { passThrough: modelPassThrough(world.log, actor, mutation === 'pass-crossed-tenant') }),
      inProgress:
        mutation === 'origin-ignores-in-progress' ? undefined : (reader ?? deps.inProgress),
    };
  };
  /** A fan-out step's delivery: the worker as wired, with the model's queue and batch size. */
  const fanOutWorker = (actor: string, faults: ActorFaults, step: FanOutMessage) => {
    // A step acts for its revalidation's tenant (its effect id: `rv_<revalidation>-<run id>`).
    const revalidation = /^rv_(v\d+)-/.exec(step.effectId)?.[1];
    if (revalidation !== undefined) scope.tenantWatch?.expectAs(actor, revalidation);
    const deps = worker(actor, faults, 60_000, `fan-out:${actor}`);
    if (deps.fanOut === undefined) throw new Error('the worker is wired without fan-out steps');
    const queue = run.sqs.queueFor(actor, faults);
    const marks = marksOf(deps.fanOut.marks, step.effectId, deps.fanOut.clock);
    const batchSize = run.fanOut.batchSize;
    return { ...deps, fanOut: { ...deps.fanOut, queue, fanOutQueue: queue, batchSize, marks } };
  };
  return { clientsOf, marksOf, worker, origin, fanOutWorker };
}
export type Actors = ReturnType<typeof wireActors>;

/**
 * Negative control of issue 33, fix 3: a path revalidation lifts the hit-for-pass mark of the
 * page's own key only, and its variants keep theirs.
 */
function variantsKeepPass(
  marks: RevalidationMarks,
  keyPks: ReadonlySet<string>,
): RevalidationMarks {
  return new Proxy(marks, {
    get(target, property, receiver) {
      if (property === 'clearPass') {
        return (pk: string) => (keyPks.has(pk) ? target.clearPass(pk) : Promise.resolve(false));
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}
