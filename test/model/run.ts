/**
 * One model-check run: a generated plan of deliveries (with duplicates, skew and faults), origin
 * requests, revalidations and the fan-out steps they queue, interleaved by a generated schedule
 * against the real code; then the faults stop, every fan-out step still queued is delivered (a
 * stalled fan-out resent by the sweeper) and every unfinished intent is redelivered; then the
 * invariants are checked.
 */
import { createHash } from 'node:crypto';
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { Guard } from '../../lambda/adapters/shared/dynamodb/conditions.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { DynamoRevalidationsInProgress } from '../../lambda/adapters/revalidations-in-progress/dynamodb.js';
import { DynamoRevalidationStatuses } from '../../lambda/adapters/revalidation-status/dynamodb.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import { IsrError } from '../../lambda/core/errors.js';
import { needsNoRegeneration } from '../../lambda/core/page/freshness.js';
import { rollback } from '../../lambda/core/operate/rollback.js';
import { versionSortKey } from '../../lambda/core/page/rows.js';
import { encodeIntent, type RegenerationIntent } from '../../lambda/core/page/intent.js';
import type { RevalidationMarks } from '../../lambda/core/revalidate/ports.js';
import { resumeStalledFanOuts } from '../../lambda/core/revalidate/fan-out.js';
import type { FanOutMessage } from '../../lambda/core/revalidate/fan-out-message.js';
import type { InProgressReader } from '../../lambda/core/page/in-progress.js';
import { createOriginDeps } from '../../lambda/origin/build.js';
import { servePage } from '../../lambda/core/serve/serve.js';
import {
  loadOriginConfig,
  loadRevalidateConfig,
  loadWorkerConfig,
  type OriginConfig,
  type RevalidateConfig,
  type WorkerConfig,
} from '../../lambda/shared/config.js';
import { createWorkerDeps } from '../../lambda/worker/build.js';
import { processMessage } from '../../lambda/core/worker/process-message.js';
import type { MessageReport } from '../../lambda/core/worker/deps.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import { lambdaContext } from '../../local/worker-poller.js';
import { removeGuard } from '../helpers/guard-mutation.js';
import {
  checkFanOutsDone,
  fanOutArbitrary,
  FanOutDeliveries,
  observedMarks,
  progressRowsOf,
  type FanOutPlan,
} from './fan-out.js';
import { Interleaver } from './interleaver.js';
import { targetedPlanArbitrary } from './plans.js';
import { FakeSqs } from './queue.js';
import { checkRows, checkViewers } from './revalidation-checks.js';
import { getOf, servedEvent, startViewers } from './viewers.js';
import {
  checkPurges,
  checkRetired,
  clearRunRows,
  FakeCdn,
  FAN_OUT_STALLED_SECONDS,
  fanOutSweepDeps,
  startSweepers,
  sweeperArbitraries,
  type CdnOutcome,
  type SweeperMutation,
  type SweepPlan,
} from './sweeper.js';
import {
  checkTagIndex,
  holdBeatsExpire,
  startWriters,
  writerArbitraries,
  type HoldPlan,
  type RevalidationPlan,
} from './writers.js';
import {
  CrashPoint,
  LEASE_SECONDS,
  REVALIDATE_SECONDS,
  sharedKeyBodies,
  uniqueRunId,
  World,
  WRITES,
  type ActorFaults,
  type ModelEvent,
} from './world.js';

export interface DeliveryPlan extends ActorFaults {
  /**
   * What the invocation's context reports as time left, in model milliseconds: its REQ# claim
   * expires that long after it is taken, on the actor's clock.
   */
  readonly remainingMs: number;
}
export interface MessagePlan {
  readonly key: number;
  /** No observed generation: regenerate even if someone published since. */
  readonly forced: boolean;
  readonly deliveries: readonly DeliveryPlan[];
}
/**
 * A viewer request for a key, arriving when the schedule says, served by one of two origin
 * containers: a container's requests share its clock and its cached read of the in-progress
 * rows (`InProgressReader`), as one Lambda execution environment's do.
 */
export interface OriginPlan extends ActorFaults {
  readonly key: number;
  readonly container: number;
}
/** An operator rolls the first key back (to the version before the live one), maybe holding it. */
export interface RollbackPlan {
  readonly skew: number;
  readonly hold: boolean;
}
/**
 * What the schedule does next: jump time; release the `pick`-th waiting call; or `run` one actor
 * (by name, or the n-th waiting one) until it has made `writes` more writes, the others parked.
 */
export type Step =
  | { readonly advance: number }
  | { readonly pick: number }
  | { readonly run: string | number; readonly writes: number };
export interface Plan {
  readonly keys: number;
  readonly messages: readonly MessagePlan[];
  readonly origins: readonly OriginPlan[];
  readonly rollbacks: readonly RollbackPlan[];
  readonly revalidations: readonly RevalidationPlan[];
  readonly holds: readonly HoldPlan[];
  readonly sweeps: readonly SweepPlan[];
  /** What the CDN does with each purge, in order (it accepts once these run out). */
  readonly cdn: readonly CdnOutcome[];
  /** How fan-out steps are marked and delivered. */
  readonly fanOut: FanOutPlan;
  readonly schedule: readonly Step[];
}

/**
 * Time an invocation has left when it claims REQ# (model ms): a short one runs out at the next
 * jump of time, a long one outlives most of a schedule. Every clock is the model's, so a run
 * depends on its plan alone and a seed replays the same way on any machine.
 */
const REMAINING_MS = [5_000, 60_000] as const;
const MAX_REMAINING_MS = Math.max(...REMAINING_MS);

/** Each actor's clock is off by up to a quarter lease either way: up to half a lease between two. */
const MAX_SKEW_SECONDS = LEASE_SECONDS / 4;

const faultsArbitrary = {
  skew: fc.integer({ min: -Math.floor(MAX_SKEW_SECONDS), max: Math.floor(MAX_SKEW_SECONDS) }),
  crashAfter: fc.option(fc.constantFrom(...Object.values(CrashPoint)), { freq: 3, nil: undefined }),
  conflictOnPublish: fc.boolean(),
  loseAnswer: fc.oneof(
    { weight: 4, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
};

const randomPlanArbitrary: fc.Arbitrary<Plan> = fc.record({
  keys: fc.integer({ min: 1, max: 2 }),
  messages: fc.array(
    fc.record({
      key: fc.nat(),
      forced: fc.boolean(),
      deliveries: fc.array(
        fc.record({ ...faultsArbitrary, remainingMs: fc.constantFrom(...REMAINING_MS) }),
        {
          minLength: 1,
          maxLength: 3,
        },
      ),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  origins: fc.array(
    fc.record({ ...faultsArbitrary, key: fc.nat(), container: fc.integer({ min: 0, max: 1 }) }),
    { maxLength: 3 },
  ),
  rollbacks: fc.array(fc.record({ skew: faultsArbitrary.skew, hold: fc.boolean() }), {
    maxLength: 1,
  }),
  ...writerArbitraries(faultsArbitrary.skew),
  ...sweeperArbitraries(faultsArbitrary.skew),
  fanOut: fanOutArbitrary(faultsArbitrary.skew),
  schedule: fc.array(
    fc.oneof(
      {
        weight: 2,
        arbitrary: fc.record({ advance: fc.integer({ min: 1, max: 2 * LEASE_SECONDS }) }),
      },
      { weight: 10, arbitrary: fc.record({ pick: fc.nat() }) },
      {
        weight: 1,
        arbitrary: fc.record({ run: fc.nat(), writes: fc.integer({ min: 1, max: 4 }) }),
      },
    ),
    { maxLength: 80 },
  ),
});

/**
 * Most plans are random; a third are targeted races around one page (`plans.ts`), which random
 * schedules make too rarely for their guards' negative controls to be caught.
 */
export const planArbitrary: fc.Arbitrary<Plan> = fc.oneof(
  { weight: 2, arbitrary: randomPlanArbitrary },
  { weight: 1, arbitrary: targetedPlanArbitrary },
);

/** A guard removed for a negative control; `none` runs the real code as shipped. */
export type Mutation =
  | 'none'
  | 'no-token-condition'
  | 'no-free-lease-condition'
  | 'no-request-open-condition'
  | 'no-render-lease-check'
  | 'no-tag-meta-condition'
  | 'no-revalidated-condition'
  | 'shared-body-key'
  | 'expire-spares-held'
  | 'no-in-progress-entries'
  | 'no-in-progress-wait'
  | 'no-cursor-condition'
  | 'origin-ignores-in-progress'
  | SweeperMutation;

export interface ModelContext {
  readonly endpoints: { readonly dynamodb: string; readonly s3: string };
  readonly workerConfig: WorkerConfig;
  readonly originConfig: OriginConfig;
  readonly revalidateConfig: RevalidateConfig;
}

/** The configuration every model run uses: the lease, freshness and skew margin the plans assume. */
export function modelContext(
  endpoints: ModelContext['endpoints'],
  tableName: string,
  bucketName: string,
): ModelContext {
  const env = {
    FACETHEORY_CACHE_TABLE_NAME: tableName,
    ISR_BODY_BUCKET: bucketName,
    ISR_QUEUE_URL: 'http://localhost/unused.fifo',
    ISR_DLQ_URL: 'http://localhost/unused-dlq.fifo',
    ISR_LEASE_SECONDS: String(LEASE_SECONDS),
    // the largest skew between two actors, each up to MAX_SKEW_SECONDS off true time
    ISR_CLOCK_SKEW_MARGIN_SECONDS: String(2 * MAX_SKEW_SECONDS),
    ISR_REVALIDATE_SECONDS: String(REVALIDATE_SECONDS),
    ISR_DEPLOY_ID: 'model',
    // The fewest kept versions: publishes drop versions (row and body) as often as possible.
    ISR_KEEP_VERSIONS: '2',
    // Two shards, so the keys spread over both; an origin reuses a read for a whole second of
    // model time (time moves in whole seconds), and the 202 waits as long (`sleepingClockFor`).
    ISR_REVALIDATION_SHARDS: '2',
    ISR_IN_PROGRESS_CACHE_MS: '1000',
  };
  return {
    endpoints,
    workerConfig: loadWorkerConfig(env),
    originConfig: loadOriginConfig(env),
    revalidateConfig: loadRevalidateConfig(env),
  };
}

export class InvariantViolation extends Error {
  override readonly name = 'InvariantViolation';
}

const START = 1_900_000_000;
/** How long a planned rollback holds its page. */
const HOLD_SECONDS = 3 * LEASE_SECONDS;

export async function runPlan(
  context: ModelContext,
  plan: Plan,
  mutation: Mutation = 'none',
): Promise<{ readonly digest: string; readonly log: string }> {
  const { runId, keys } = runKeys(plan.keys, context);
  const world = new World(context.endpoints, START);
  world.tagPrefix = `model-${runId}-`; // `model-<run id>` is normalised in the digest
  const interleaver = new Interleaver();
  const observer = observerFor(context);
  const destroyers: (() => void)[] = [observer.destroy];
  const guard = (client: DynamoDBClient) => {
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
  };

  try {
    const shards = context.originConfig.revalidationShards;
    await clearRunRows(observer.dynamodb, observer.tableName, shards);
    const cdn = new FakeCdn(plan.cdn, world.log, interleaver);
    const seeded = await seed(world, interleaver, context, keys[0]);
    const renderCheck =
      mutation === 'no-render-lease-check' ? { clockSkewMarginSeconds: -Infinity } : {};
    const queued: RegenerationIntent[] = [];
    const sqs = new FakeSqs(world, interleaver, queued);
    destroyers.push(() => sqs.destroy());
    /** Every revalidation's effect id, and the pages each found with META when marking. */
    const effectIds = new Set<string>();
    const found = new Map<string, Set<string>>();
    const marksOf = (marks: RevalidationMarks, effectId: string, clock: Clock) => {
      const observed = observedMarks(marks, effectId, found);
      return mutation === 'expire-spares-held' ? holdBeatsExpire(observed, clock) : observed;
    };

    /** One actor's gated clients, torn down with the run. */
    const clientsOf = (actor: string, faults: ActorFaults) => {
      const clients = world.clientsFor(actor, interleaver, faults);
      guard(clients.dynamodb);
      destroyers.push(() => {
        clients.dynamodb.destroy();
        clients.s3.destroy();
      });
      return clients;
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
        bodies: mutation === 'shared-body-key' ? sharedKeyBodies(deps.bodies) : deps.bodies,
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
            queued.push(intent);
            return Promise.resolve();
          },
        },
        bodies: mutation === 'shared-body-key' ? sharedKeyBodies(deps.bodies) : deps.bodies,
        inProgress:
          mutation === 'origin-ignores-in-progress' ? undefined : (reader ?? deps.inProgress),
      };
    };
    /** A fan-out step's delivery: the worker as wired, with the model's queue and batch size. */
    const fanOutWorker = (actor: string, faults: ActorFaults, step: FanOutMessage) => {
      const deps = worker(actor, faults, 60_000, `fan-out:${actor}`);
      if (deps.fanOut === undefined) throw new Error('the worker is wired without fan-out steps');
      const queue = sqs.queueFor(actor, faults);
      const marks = marksOf(deps.fanOut.marks, step.effectId, deps.fanOut.clock);
      const batchSize = plan.fanOut.batchSize;
      return { ...deps, fanOut: { ...deps.fanOut, queue, fanOutQueue: queue, batchSize, marks } };
    };
    const deliveries = new FanOutDeliveries({
      world,
      interleaver,
      sqs,
      plan: plan.fanOut,
      workerFor: fanOutWorker,
    });

    // Messages and their deliveries (duplicates run side by side, in any order).
    const messages = plan.messages.map((message, index) => {
      const key = keys[message.key % keys.length];
      const observed = key === keys[0] && !message.forced ? { observedGeneratedAt: seeded } : {};
      return {
        id: `m${index}-${runId}`,
        body: encodeIntent({
          v: 1,
          path: key.path,
          query: '',
          deployId: context.workerConfig.deployId,
          ...observed,
        }),
      };
    });
    const reports = new Map<string, MessageReport[]>();
    const record = (messageId: string, report: MessageReport | undefined) => {
      if (report !== undefined) reports.set(messageId, [...(reports.get(messageId) ?? []), report]);
    };
    plan.messages.forEach((message, m) => {
      const { id, body } = messages[m];
      message.deliveries.forEach((delivery, d) => {
        const actor = `w${m}.${d}`;
        const deps = worker(actor, delivery, delivery.remainingMs, id);
        void interleaver
          .start(actor, () =>
            processMessage(deps, { messageId: id, body, receiveCount: d + 1, groupId: 'g' }),
          )
          .then((report) => record(id, report as MessageReport | undefined));
      });
    });
    const viewers = startViewers(
      {
        world,
        interleaver,
        keys,
        originConfig: context.originConfig,
        tableName: context.workerConfig.tableName,
        clientsOf,
        origin,
      },
      plan.origins,
    );

    plan.rollbacks.forEach((rollbackPlan, index) => {
      const actor = `r${index}`;
      const clients = clientsOf(actor, { skew: rollbackPlan.skew });
      const tables = { client: clients.dynamodb, tableName: context.workerConfig.tableName };
      const deps = {
        cacheTable: new DynamoCacheTable(tables),
        history: new DynamoPageHistory(tables),
        bodies: new S3BodyStore({ client: clients.s3, bucket: context.workerConfig.bucket }),
        clock: world.clockFor(rollbackPlan.skew),
        leaseSeconds: LEASE_SECONDS,
      };
      void interleaver.start(actor, () =>
        rollback(deps, {
          cacheKey: keys[0],
          holdSeconds: rollbackPlan.hold ? HOLD_SECONDS : undefined,
          actor,
        }).catch((error: unknown) => {
          // Refused (META changed, the lease was taken, nothing older): nothing was written.
          if (error instanceof IsrError) return undefined;
          throw error;
        }),
      );
    });

    const writers = startWriters(
      {
        world,
        interleaver,
        keys,
        tableName: context.workerConfig.tableName,
        bucket: context.workerConfig.bucket,
        deployId: context.workerConfig.deployId,
        clientsOf,
        runId,
        revalidateConfig: context.revalidateConfig,
        sqs,
        effectIds,
        marksOf,
        cdn,
        mutation,
      },
      plan,
    );
    const sweepers = startSweepers(
      {
        log: world.log,
        interleaver,
        keys,
        tableName: context.workerConfig.tableName,
        bucket: context.workerConfig.bucket,
        cdn,
        clientsOf,
        clockFor: (skew) => world.clockFor(skew),
        sqs,
        mutation,
      },
      plan.sweeps,
    );
    const sweeperActors = new Set(sweepers);
    /** After one released call: the bodies it touched, what a sweeper deleted, the 202s so far. */
    const afterStep = async (before: number, label: string) => {
      const fresh = world.log.slice(before);
      for (const event of fresh) {
        if (event.kind !== 'retire' || !sweeperActors.has(event.actor)) continue;
        const violation = await checkRetired(
          observer.dynamodb,
          observer.tableName,
          world.log,
          event,
        );
        if (violation !== undefined) throw new InvariantViolation(violation);
      }
      await checkRevalidations();
      await checkLiveBody(world.log, fresh, observer);
      // A step sent is delivered as the plan says (a crashed one again), and a container whose
      // request crashed serves its next: new actors, let run to their first gate.
      const started = [deliveries.start(), viewers.poke()];
      if (started.some(Boolean)) await interleaver.settle();
      // The tag index covers META's tags at every moment, not just at the end (a later render
      // may change the tags back and hide a lost row).
      if (TAG_WRITES.has(label)) {
        const untagged = await checkTagIndex(
          observer.dynamodb,
          observer.tableName,
          await metasOf(observer, keys),
        );
        if (untagged !== undefined) throw new InvariantViolation(untagged);
      }
    };
    /** The 202 invariant on the rows, now: read only once a revalidation has answered. */
    const checkRevalidations = async () => {
      if (!world.log.some((event) => event.kind === 'revalidated')) return;
      const states = await Promise.all(
        Array.from({ length: shards }, (_, shard) => observer.inProgress.read(undefined, shard)),
      );
      const violation = checkRows(world.log, await metasOf(observer, keys), states, {
        nowSeconds: world.trueTime,
        marginSeconds: context.originConfig.clockSkewMarginSeconds,
      });
      if (violation !== undefined) throw new InvariantViolation(violation);
    };

    // Chaos: the schedule picks who moves next and when time jumps.
    await interleaver.settle();
    for (const step of plan.schedule) {
      if (!interleaver.hasWaiting()) break;
      if ('advance' in step) {
        world.trueTime += step.advance;
        continue;
      }
      const picks = 'pick' in step ? [step.pick] : runOf(interleaver, step);
      for (const pick of picks) {
        const before = world.log.length;
        const { label } = await interleaver.step(pick);
        await afterStep(before, label);
      }
    }
    while (interleaver.hasWaiting()) {
      const before = world.log.length;
      const { label } = await interleaver.step(0);
      await afterStep(before, label);
    }
    for (const actor of [
      ...sweepers,
      ...plan.messages.flatMap((m, i) => m.deliveries.map((_, d) => `w${i}.${d}`)),
      ...plan.origins.map((_, i) => `o${i}`),
      ...plan.rollbacks.map((_, i) => `r${i}`),
      ...writers,
      ...deliveries.actors(),
    ]) {
      const error = interleaver.errorOf(actor);
      if (error !== undefined)
        throw new InvariantViolation(
          `${actor} threw: ${error instanceof Error ? error.stack : JSON.stringify(error)}`,
        );
    }

    // Faults stop: every lease runs out (a lease taken by a clock running fast lasts up to the
    // lease plus the largest skew) and, as SQS's visibility timeout (>= 6x the function timeout)
    // guarantees, a redelivery comes only after a crashed invocation's time is up, so its REQ#
    // claim has run out too. Then unfinished intents are redelivered until done.
    world.trueTime +=
      Math.max(LEASE_SECONDS, Math.ceil(MAX_REMAINING_MS / 1000)) + MAX_SKEW_SECONDS + 1;
    let quiet = 0;
    // Every fan-out step still queued is delivered; a fan-out still unfinished has stalled (a
    // step dropped, or crashed after moving the cursor): the sweeper resends it once it is.
    for (let round = 0; ; round++) {
      await deliveries.deliverQuietly(() => `q${quiet++}`);
      const left = await progressRowsOf(observer.dynamodb, observer.tableName, effectIds);
      if (left.length === 0) break;
      if (round >= 3) {
        throw new InvariantViolation(
          `a fan-out never finished, resent by the sweeper ${round} times: ${left.join('; ')}`,
        );
      }
      world.trueTime += FAN_OUT_STALLED_SECONDS + 2 * MAX_SKEW_SECONDS + 1;
      const actor = `q${quiet++}`;
      const sweep = { tableName: observer.tableName, sqs, mutation };
      const resume = fanOutSweepDeps(
        sweep,
        actor,
        clientsOf(actor, { skew: 0 }),
        world.clockFor(0),
      );
      await resumeStalledFanOuts(resume, resume);
    }
    const done = (id: string) =>
      (reports.get(id) ?? []).some((report) => report.action !== 'retry');
    for (let round = 0; ; round++) {
      const pending = messages.filter((message) => !done(message.id));
      for (const message of pending) {
        const actor = `q${quiet++}`;
        const deps = worker(actor, { skew: 0 }, 60_000, message.id);
        const receiveCount = (reports.get(message.id)?.length ?? 0) + 1;
        const before = world.log.length;
        record(
          message.id,
          await processMessage(deps, {
            messageId: message.id,
            body: message.body,
            receiveCount,
            groupId: 'g',
          }),
        );
        await checkLiveBody(world.log, world.log.slice(before), observer);
      }
      for (const key of keys) {
        const actor = `q${quiet++}`;
        const deps = origin(actor, { skew: 0 });
        const from = world.log.length;
        const now = epochSeconds(deps.clock);
        const response = await servePage(deps, getOf(key));
        world.log.push(servedEvent(actor, key, { from, now }, response));
      }
      for (const intent of queued.splice(0)) {
        messages.push({ id: `queued${messages.length}-${runId}`, body: encodeIntent(intent) });
      }
      const metas = await Promise.all(
        keys.map((key) => observer.table.getMeta(key.pk, { consistent: true })),
      );
      // A held page stays stale until its hold ends: that is the hold working.
      const allFresh = metas.every(
        (meta) => meta !== undefined && needsNoRegeneration(meta, world.trueTime),
      );
      if (allFresh && messages.every((message) => done(message.id))) break;
      if (round >= 40) {
        throw new InvariantViolation(
          `not settled after the faults stopped: ${JSON.stringify({ metas, reports: [...reports] })}`,
        );
      }
    }

    checkLog(world.log);
    await checkRevalidations();
    const viewed = checkViewers(world.log);
    if (viewed !== undefined) throw new InvariantViolation(viewed);
    const finished = await checkFanOutsDone(observer.statuses, observer.inProgress, {
      effectIds,
      found,
      shards,
      tagPrefix: world.tagPrefix,
    });
    if (finished !== undefined) throw new InvariantViolation(finished);
    if (deliveries.problems.length > 0) throw new InvariantViolation(deliveries.problems[0]);
    const tagged = await checkTagIndex(
      observer.dynamodb,
      observer.tableName,
      await metasOf(observer, keys),
    );
    if (tagged !== undefined) throw new InvariantViolation(tagged);
    const lost = await checkPurges(observer.dynamodb, observer.tableName, world.log, cdn);
    if (lost !== undefined) throw new InvariantViolation(lost);
    for (const [id, list] of reports) {
      const dead = list.find((report) => report.action === 'dead-letter');
      if (dead !== undefined)
        throw new InvariantViolation(`${id} was dead-lettered: ${JSON.stringify(dead)}`);
    }
    await checkStartedRequestsCanFinish(observer, keys, world.trueTime, async (messageId) => {
      const message = messages.find((candidate) => candidate.id === messageId);
      if (message === undefined) throw new InvariantViolation(`REQ#${messageId} names no message`);
      const deps = worker(`q${quiet++}`, { skew: 0 }, 60_000, message.id);
      return processMessage(deps, {
        messageId,
        body: message.body,
        receiveCount: 99,
        groupId: 'g',
      });
    });
    await checkLiveBody(
      world.log,
      world.log.filter((event) => event.kind === 'publish'),
      observer,
    );
    return { digest: logDigest(world.log), log: normalisedLog(world.log) };
  } catch (error) {
    // ISR_MODEL_DUMP=1: the failing run's event log, to read what led to the violation.
    if (process.env.ISR_MODEL_DUMP === '1') console.error(normalisedLog(world.log));
    throw error;
  } finally {
    for (const destroy of destroyers) destroy();
  }
}

/** Calls after which the tag index is checked: they publish, expire or (un)index a page. */
const TAG_WRITES = new Set([
  'dynamodb:DeleteItemCommand',
  'dynamodb:TransactWriteItemsCommand',
  'dynamodb:BatchWriteItemCommand',
]);
/** A `run` step releases at most this many calls: an actor retrying in a loop still yields. */
const MAX_RUN_CALLS = 60;

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

/**
 * The run's id and keys. Keys are named after the id (runs share one table), but their hashes
 * decide where they sort in a tag's index (the order a fan-out marks them): an id is drawn until
 * key n sorts n-th, so a plan replays the same way whatever the id.
 */
function runKeys(count: number, context: ModelContext): { runId: string; keys: CacheKey[] } {
  for (;;) {
    const runId = uniqueRunId();
    const keys = Array.from({ length: count }, (_, index) =>
      normaliseCacheKey({ rawPath: `/model-${runId}-k${index}` }, context.workerConfig.keyPolicy),
    );
    if (keys.every((key, index) => index === 0 || keys[index - 1].pk < key.pk)) {
      return { runId, keys };
    }
  }
}

/** Random names in a log: lease tokens, the run's id, keys, key tags and purge ids made from it. */
const RANDOM_ID =
  /isr-[0-9a-f]{48}|key:[0-9a-f]{40}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|model-[0-9a-f]{8}|-[0-9a-f]{8}\b|[0-9a-f]{64}/g;

/**
 * What a run did, as a hash: its event log with every random name (lease tokens, the run's id
 * and the cache keys made from it) replaced by its order of first appearance. Two runs of one plan
 * have the same digest exactly when they made the same calls, in the same order, with the same
 * results: a seed replays the same way on any machine.
 */
export function logDigest(log: readonly ModelEvent[]): string {
  return createHash('sha256').update(normalisedLog(log)).digest('hex');
}

/** The event log as JSON, random names replaced (see `logDigest`): what two replays compare. */
export function normalisedLog(log: readonly ModelEvent[]): string {
  const names = new Map<string, string>();
  return JSON.stringify(log).replace(RANDOM_ID, (id) => {
    if (!names.has(id)) names.set(id, `<${names.size}>`);
    return names.get(id) ?? id;
  });
}

/**
 * The first key starts with two kept versions, both stale: the older one is what a planned
 * rollback goes back to. @returns generated_at of the live one
 */
async function seed(
  world: World,
  interleaver: Interleaver,
  context: ModelContext,
  key: CacheKey,
): Promise<number> {
  const clients = world.clientsFor('seed', interleaver, { skew: 0 });
  try {
    const table = new DynamoCacheTable({
      client: clients.dynamodb,
      tableName: context.workerConfig.tableName,
    });
    const bodies = new S3BodyStore({ client: clients.s3, bucket: context.workerConfig.bucket });
    let versionSks: string[] = [];
    let generatedAt = 0;
    const now = world.trueTime;
    for (const [index, age] of [200, 100].entries()) {
      generatedAt = now - age; // stale from the start
      world.trueTime = generatedAt; // its body was written then: old enough for a sweeper
      const lease = await table.acquireLease({
        pk: key.pk,
        now: generatedAt,
        durationSeconds: LEASE_SECONDS,
      });
      const stored = await bodies.putBody({
        s3Key: `pages/_/${key.hash}/seed${index}`,
        body: new TextEncoder().encode(`seed page ${index}`),
        contentType: 'text/html',
      });
      const currentSk = versionSortKey(generatedAt, lease.token);
      versionSks = [currentSk, ...versionSks];
      await table.publishGeneration({
        observed: undefined,
        lease,
        now: generatedAt,
        meta: {
          pk: key.pk,
          s3Key: stored.s3Key,
          etag: stored.etag,
          generatedAt,
          revalidateSeconds: 20,
          currentSk,
          versionSks,
        },
      });
    }
    world.trueTime = now;
    return generatedAt;
  } finally {
    clients.dynamodb.destroy();
    clients.s3.destroy();
  }
}

function observerFor(context: ModelContext) {
  const common = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamodb = new DynamoDBClient({ ...common, endpoint: context.endpoints.dynamodb });
  const s3 = new S3Client({
    ...common,
    endpoint: context.endpoints.s3,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const tableName = context.workerConfig.tableName;
  return {
    dynamodb,
    tableName,
    table: new DynamoCacheTable({ client: dynamodb, tableName: context.workerConfig.tableName }),
    history: new DynamoPageHistory({
      client: dynamodb,
      tableName: context.workerConfig.tableName,
    }),
    bodies: new S3BodyStore({ client: s3, bucket: context.workerConfig.bucket }),
    inProgress: new DynamoRevalidationsInProgress({ client: dynamodb, tableName }),
    statuses: new DynamoRevalidationStatuses({ client: dynamodb, tableName }),
    destroy: () => {
      dynamodb.destroy();
      s3.destroy();
    },
  };
}
type Observer = ReturnType<typeof observerFor>;

/** Each key's META as it is now (strongly consistent). */
async function metasOf(observer: Observer, keys: readonly CacheKey[]) {
  const metas = await Promise.all(
    keys.map(
      async (key) => [key.pk, await observer.table.getMeta(key.pk, { consistent: true })] as const,
    ),
  );
  return new Map(metas);
}

/**
 * META only ever points to a complete body written by the worker whose publish won, and so does
 * every version META keeps: its VER# row exists and its body is what its publisher wrote. The
 * live version is one of the kept ones and names META's body. Checked after every step that
 * wrote a body, published or restored, so a transient overwrite is caught too, and once more
 * after the run.
 */
async function checkLiveBody(
  log: readonly ModelEvent[],
  fresh: readonly ModelEvent[],
  observer: Observer,
): Promise<void> {
  const touched = new Set(
    fresh
      .filter(
        (event) =>
          event.kind === 'body' ||
          event.kind === 'publish' ||
          event.kind === 'restore' ||
          event.kind === 'retire',
      )
      .map((event) => event.pk),
  );
  for (const pk of touched) {
    const meta = await observer.table.getMeta(pk, { consistent: true });
    if (meta === undefined) continue;
    await checkBodyOf(log, observer, `META of ${pk}`, meta.s3Key);
    if (meta.currentSk === undefined) continue;
    if (!(meta.versionSks ?? []).includes(meta.currentSk)) {
      throw new InvariantViolation(
        `META of ${pk} points at ${meta.currentSk}, which it does not keep`,
      );
    }
    for (const sk of meta.versionSks ?? []) {
      const version = await observer.history.version(pk, sk);
      if (version === undefined)
        throw new InvariantViolation(`META of ${pk} keeps ${sk}, whose row is gone`);
      if (sk === meta.currentSk && version.s3Key !== meta.s3Key) {
        throw new InvariantViolation(
          `META of ${pk} serves ${meta.s3Key} but its live version ${sk} is ${version.s3Key}`,
        );
      }
      await checkBodyOf(log, observer, `version ${sk} of ${pk}`, version.s3Key);
    }
  }
}

/** `s3Key` was written by the actor whose publish put it in META, and still holds that body. */
async function checkBodyOf(
  log: readonly ModelEvent[],
  observer: Observer,
  what: string,
  s3Key: string,
): Promise<void> {
  const winner = [...log]
    .reverse()
    .find((event) => event.kind === 'publish' && event.s3Key === s3Key);
  if (winner === undefined)
    throw new InvariantViolation(`${what} points at ${s3Key}, which no publish wrote`);
  const written = [...log]
    .reverse()
    .find(
      (event): event is Extract<ModelEvent, { kind: 'body' }> =>
        event.kind === 'body' && event.s3Key === s3Key && event.actor === winner.actor,
    );
  const stored = await observer.bodies.getBody(s3Key).catch(() => undefined);
  const text = stored === undefined ? undefined : new TextDecoder().decode(stored.body);
  if (written === undefined || text !== written.content) {
    throw new InvariantViolation(
      `${what} points at ${s3Key}, published by ${winner.actor}, but the body there is ${JSON.stringify(text)}, not what ${winner.actor} wrote (${JSON.stringify(written?.content)})`,
    );
  }
}

/**
 * Replays the event log against a ghost LOCK: a lease is only granted once the previous one
 * ended or ran out on the taker's clock (an operator's seize ends it at once); every publish
 * and every operator restore came from the current lease holder; generated_at never decreases;
 * each intent publishes at most once; two renders of one intent never overlap a live lease; no
 * intent publishes over an operator's hold before it ends (give or take the clocks' skew).
 */
export function checkLog(log: readonly ModelEvent[]): void {
  const holder = new Map<string, string | undefined>();
  const expiresAt = new Map<string, number>();
  const ended = new Set<string>();
  const generation = new Map<string, number>();
  const publishedIntents = new Set<string>();
  const leaseOf = new Map<string, string>(); // actor -> its lease token
  const renders = new Map<string, string[]>(); // intent -> lease tokens it rendered under
  const heldUntil = new Map<string, number>(); // pk -> end of an operator's hold (its clock)
  const fromHolder = (event: { actor: string; pk: string; token: string }, what: string) => {
    if (holder.get(event.pk) !== event.token) {
      throw new InvariantViolation(
        `${event.actor} ${what} ${event.pk} with lease ${event.token}, but the lease belonged to ${holder.get(event.pk) ?? 'nobody'}`,
      );
    }
    holder.set(event.pk, undefined);
    ended.add(event.token);
  };
  const advance = (event: { pk: string; generatedAt: number }) => {
    const before = generation.get(event.pk) ?? -Infinity;
    if (event.generatedAt < before) {
      throw new InvariantViolation(
        `generated_at of ${event.pk} went back from ${before} to ${event.generatedAt}`,
      );
    }
    generation.set(event.pk, event.generatedAt);
  };
  for (const event of log) {
    switch (event.kind) {
      case 'seize': {
        const previous = holder.get(event.pk);
        if (previous !== undefined) ended.add(previous);
        holder.set(event.pk, event.token);
        expiresAt.set(event.token, event.expiresAt);
        leaseOf.set(event.actor, event.token);
        break;
      }
      case 'restore':
        fromHolder(event, 'restored');
        advance(event);
        if (event.holdUntil === undefined) heldUntil.delete(event.pk);
        else heldUntil.set(event.pk, event.holdUntil);
        break;
      case 'acquire': {
        const previous = holder.get(event.pk);
        const takerNow = event.at + event.skew;
        if (
          previous !== undefined &&
          !ended.has(previous) &&
          (expiresAt.get(previous) ?? 0) > takerNow
        ) {
          throw new InvariantViolation(
            `${event.actor} was granted ${event.pk} at ${takerNow} (its clock) while lease ${previous} was live until ${expiresAt.get(previous)}`,
          );
        }
        if (previous !== undefined) ended.add(previous);
        holder.set(event.pk, event.token);
        expiresAt.set(event.token, event.expiresAt);
        leaseOf.set(event.actor, event.token);
        break;
      }
      case 'release':
        if (holder.get(event.pk) === event.token) holder.set(event.pk, undefined);
        ended.add(event.token);
        break;
      case 'publish': {
        fromHolder(event, 'published');
        advance(event);
        const hold = heldUntil.get(event.pk);
        if (
          event.intent !== undefined &&
          hold !== undefined &&
          event.at < hold - MAX_SKEW_SECONDS
        ) {
          throw new InvariantViolation(
            `intent ${event.intent} published ${event.pk} at ${event.at}, while an operator held it until ${hold}`,
          );
        }
        if (event.intent !== undefined) {
          if (publishedIntents.has(event.intent))
            throw new InvariantViolation(`intent ${event.intent} published twice`);
          publishedIntents.add(event.intent);
        }
        break;
      }
      case 'render': {
        const token = leaseOf.get(event.actor) ?? '';
        const earlier = renders.get(event.intent) ?? [];
        const live = earlier.find((other) => other !== token && !ended.has(other));
        if (live !== undefined) {
          throw new InvariantViolation(
            `intent ${event.intent} rendered by ${event.actor} while lease ${live} of an earlier render was live`,
          );
        }
        renders.set(event.intent, [...earlier, token]);
        break;
      }
      case 'hold':
        fromHolder(event, 'held');
        heldUntil.set(event.pk, event.holdUntil);
        break;
      case 'unhold':
        heldUntil.delete(event.pk);
        break;
      case 'expire':
        // META is gone, its hold with it: an `expire` is a takedown and beats a hold (decided,
        // issue 19; `checkExpired` asserts nothing of the page is served after it). The next
        // publish starts the page again, at any generation.
        generation.delete(event.pk);
        heldUntil.delete(event.pk);
        break;
      case 'body':
      case 'revalidated':
      case 'retire':
      case 'cdn':
      case 'served':
      case 'sent':
      case 'step':
      case 'crash':
        break;
    }
  }
}

/**
 * No REQ# row stays STARTED without a later delivery able to finish it. A row can be left
 * STARTED legitimately (its delivery crashed, and a duplicate of the same message was answered
 * by a fresh META before reaching REQ#); it must then be past its in-progress expiry, and a new
 * delivery of that message must finish (it may finish without touching the row, which DynamoDB
 * TTL then collects).
 */
async function checkStartedRequestsCanFinish(
  observer: Observer,
  keys: readonly CacheKey[],
  nowSeconds: number,
  redeliver: (messageId: string) => Promise<MessageReport>,
): Promise<void> {
  for (const key of keys) {
    for (const row of await startedRequests(observer, key)) {
      const messageId = row.sk?.S?.slice('REQ#'.length) ?? '';
      if (Number(row.in_progress_expires_at_ms?.N ?? Infinity) >= nowSeconds * 1000) {
        throw new InvariantViolation(
          `REQ#${messageId} is STARTED and not yet expired after every intent finished`,
        );
      }
      const report = await redeliver(messageId);
      if (report.action === 'retry') {
        throw new InvariantViolation(
          `REQ#${messageId} was left STARTED and a later delivery could not finish: ${JSON.stringify(report)}`,
        );
      }
    }
  }
}

async function startedRequests(observer: Observer, key: CacheKey) {
  const { Items } = await observer.dynamodb.send(
    new QueryCommand({
      TableName: observer.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :req)',
      ExpressionAttributeValues: { ':pk': { S: key.pk }, ':req': { S: 'REQ#' } },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).filter((item) => item.status?.S === 'STARTED');
}
