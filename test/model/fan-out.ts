/**
 * A tag revalidation's background marking as model-check actors (issue 23): each fan-out step
 * the revalidation or a step queued is delivered to the real worker (`processMessage`, which
 * hands it to `markBatch`) as the plan says: once, twice at once, crashed after any of its
 * writes (SQS then redelivers it), or dropped (the sweeper must resend it once it stalls). And
 * the invariants of the marking itself: every fan-out finishes, `marked` is never doubled, and
 * no in-progress entry outlives its fan-out.
 */
import { QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { FAN_OUT_PK } from '../../lambda/adapters/fan-out-progress-rows/keys.js';
import type { CacheMeta } from '../../lambda/core/page/model.js';
import type {
  RevalidationMarks,
  RevalidationStatuses,
} from '../../lambda/core/revalidate/ports.js';
import type { RevalidationsInProgress } from '../../lambda/core/page/ports.js';
import { parseFanOut, type FanOutMessage } from '../../lambda/core/revalidate/fan-out-message.js';
import { processMessage } from '../../lambda/core/worker/process-message.js';
import type { MessageReport, WorkerDeps } from '../../lambda/core/worker/deps.js';
import type { Interleaver } from './interleaver.js';
import { readableBody, type FakeSqs, type QueuedStep } from './queue.js';
import type { ActorFaults, World } from './world.js';

/** What becomes of the n-th fan-out step sent in a run. */
export interface StepDelivery {
  /** Delivered this many times at once (SQS is at least once). */
  readonly copies: number;
  /** Never delivered: lost, so only the sweeper's resend carries the fan-out on. */
  readonly drop: boolean;
  /** The first copy dies right after its n-th write; SQS redelivers the step later. */
  readonly crashAfterWrites: number | undefined;
  readonly skew: number;
}
export interface FanOutPlan {
  /** Tag-index rows a step marks: 1 or 2, so marking interleaves page by page with the rest. */
  readonly batchSize: number;
  readonly deliveries: readonly StepDelivery[];
}

/** A delivery without faults: what a step beyond the plan's list gets. */
export const CALM_DELIVERY: StepDelivery = {
  copies: 1,
  drop: false,
  crashAfterWrites: undefined,
  skew: 0,
};

export const fanOutArbitrary = (skew: fc.Arbitrary<number>): fc.Arbitrary<FanOutPlan> =>
  fc.record({
    batchSize: fc.constantFrom(1, 2),
    deliveries: fc.array(
      fc.record({
        copies: fc.oneof(
          { weight: 3, arbitrary: fc.constant(1) },
          { weight: 1, arbitrary: fc.constant(2) },
        ),
        drop: fc.oneof(
          { weight: 6, arbitrary: fc.constant(false) },
          { weight: 1, arbitrary: fc.constant(true) },
        ),
        crashAfterWrites: fc.oneof(
          { weight: 3, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }) },
        ),
        skew,
      }),
      { maxLength: 6 },
    ),
  });

/** Receives of one step before SQS gives up on it (it would go to the DLQ). */
const MAX_RECEIVES = 6;

export interface FanOutContext {
  readonly world: World;
  readonly interleaver: Interleaver;
  readonly sqs: FakeSqs;
  readonly plan: FanOutPlan;
  /** The worker of one delivery, as the worker function wires it (model queue, plan's batch). */
  readonly workerFor: (actor: string, faults: ActorFaults, step: FanOutMessage) => WorkerDeps;
}

interface Delivery {
  readonly actor: string;
  readonly step: QueuedStep;
  readonly receiveCount: number;
  report?: MessageReport;
  /** Its failure (a crash, a retry) has been answered with a redelivery. */
  redelivered: boolean;
}

/** The deliveries of a run's fan-out steps: started as actors in the schedule, quietly after. */
export class FanOutDeliveries {
  readonly #deliveries: Delivery[] = [];
  /** Steps (by send order) whose deliveries have been decided. */
  #next = 0;
  readonly problems: string[] = [];

  constructor(readonly ctx: FanOutContext) {}

  /** Every delivery's actor so far. */
  actors(): string[] {
    return this.#deliveries.map((delivery) => delivery.actor);
  }

  /**
   * In the schedule: starts the deliveries of the steps sent since the last call, as the plan
   * says, and a redelivery of each delivery that crashed or asked to be retried. @returns
   * whether it started any (the caller lets them reach their first gate)
   */
  start(): boolean {
    let started = false;
    for (; this.#next < this.ctx.sqs.fanOuts.length; this.#next++) {
      const index = this.#next;
      const step = this.ctx.sqs.fanOuts[index];
      const plan = this.ctx.plan.deliveries[index] ?? CALM_DELIVERY;
      if (plan.drop) {
        const body = readableBody(step.body);
        this.ctx.world.log.push({ kind: 'step', actor: `f${index}`, body, outcome: 'dropped' });
        continue;
      }
      for (let copy = 0; copy < plan.copies; copy++) {
        const faults = {
          skew: plan.skew,
          crashAfterWrites: copy === 0 ? plan.crashAfterWrites : undefined,
        };
        this.#deliver(`f${index}.${copy}`, step, copy + 1, faults);
        started = true;
      }
    }
    for (const delivery of [...this.#deliveries]) {
      if (delivery.redelivered || !this.#failed(delivery)) continue;
      delivery.redelivered = true;
      if (delivery.receiveCount >= MAX_RECEIVES) {
        this.problems.push(
          `step ${delivery.step.body} was never acknowledged in ${MAX_RECEIVES} receives`,
        );
        continue;
      }
      const actor = `${delivery.actor}r`;
      this.#deliver(actor, delivery.step, delivery.receiveCount + 1, { skew: 0 });
      started = true;
    }
    return started;
  }

  /**
   * Once faults stop: every step not yet delivered, and every failed delivery again, delivered
   * at once and without faults (their gates let them through), until none is left.
   */
  async deliverQuietly(nameOf: () => string): Promise<void> {
    for (;;) {
      const failed = this.#deliveries.find((one) => !one.redelivered && this.#failed(one));
      if (failed !== undefined) failed.redelivered = true;
      const step = failed?.step ?? this.ctx.sqs.fanOuts[this.#next];
      if (step === undefined) return;
      if (failed === undefined) this.#next += 1;
      const receiveCount = (failed?.receiveCount ?? 0) + 1;
      if (receiveCount > MAX_RECEIVES) {
        this.problems.push(`step ${step.body} was never acknowledged in ${MAX_RECEIVES} receives`);
        continue;
      }
      const actor = nameOf();
      const delivery: Delivery = { actor, step, receiveCount, redelivered: false };
      this.#deliveries.push(delivery);
      const deps = this.ctx.workerFor(actor, { skew: 0 }, parseFanOut(step.body));
      this.#finished(delivery, await processMessage(deps, messageOf(delivery)));
    }
  }

  #deliver(actor: string, step: QueuedStep, receiveCount: number, faults: ActorFaults): void {
    const delivery: Delivery = { actor, step, receiveCount, redelivered: false };
    this.#deliveries.push(delivery);
    const deps = this.ctx.workerFor(actor, faults, parseFanOut(step.body));
    void this.ctx.interleaver
      .start(actor, () => processMessage(deps, messageOf(delivery)))
      .then((report) => {
        if (report !== undefined) this.#finished(delivery, report as MessageReport);
      });
  }

  #finished(delivery: Delivery, report: MessageReport): void {
    delivery.report = report;
    const outcome = (report.detail as { fanOut?: { outcome?: string } } | undefined)?.fanOut;
    this.ctx.world.log.push({
      kind: 'step',
      actor: delivery.actor,
      body: readableBody(delivery.step.body),
      outcome: outcome?.outcome ?? report.action,
    });
    if (report.action === 'dead-letter') {
      this.problems.push(
        `${delivery.actor} dead-lettered a fan-out step: ${JSON.stringify(report)}`,
      );
    }
  }

  /** Crashed (it never answers: SQS redelivers it) or reported a retryable failure. */
  #failed(delivery: Delivery): boolean {
    if (this.ctx.interleaver.state(delivery.actor) === 'dead') return true;
    return delivery.report?.action === 'retry';
  }
}

const messageOf = (delivery: Delivery) => ({
  messageId: `${delivery.actor}-step`,
  body: delivery.step.body,
  receiveCount: delivery.receiveCount,
  groupId: 'fan-out',
});

/**
 * The marks port as it is, noting which pages each effect found with META (what `marked`
 * counts): everything else passes through untouched, so a port that changes shape still fits.
 */
export function observedMarks(
  marks: RevalidationMarks,
  effectId: string,
  found: Map<string, Set<string>>,
): RevalidationMarks {
  const note = (pk: string, meta: CacheMeta | undefined) => {
    if (meta === undefined) return meta;
    found.set(effectId, new Set([...(found.get(effectId) ?? []), pk]));
    return meta;
  };
  return new Proxy(marks, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const call = (...args: unknown[]) =>
        (value as (...a: unknown[]) => unknown).apply(target, args);
      if (property !== 'markStale' && property !== 'expire') return call;
      return async (pk: string, ...rest: unknown[]) =>
        note(pk, (await call(pk, ...rest)) as CacheMeta | undefined);
    },
  });
}

/** The run's fan-out progress rows still there (runs share one table: by their effect ids). */
export async function progressRowsOf(
  client: DynamoDBClient,
  tableName: string,
  effectIds: ReadonlySet<string>,
): Promise<string[]> {
  const { Items } = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: FAN_OUT_PK } },
      ConsistentRead: true,
    }),
  );
  return (Items ?? [])
    .filter((item) => effectIds.has(item.effect_id?.S ?? ''))
    .map((item) => `${item.sk?.S} at cursor ${JSON.stringify(item.cursor?.S)}`);
}

/**
 * Once every fan-out ran out of steps: each accepted revalidation's status is `done`; its
 * `marked` is at most the distinct pages it found with META (a duplicate step counts once);
 * and no in-progress entry of the run's tags is left. @returns the first violation
 */
export async function checkFanOutsDone(
  statuses: RevalidationStatuses,
  inProgress: RevalidationsInProgress,
  input: {
    readonly effectIds: ReadonlySet<string>;
    readonly found: ReadonlyMap<string, ReadonlySet<string>>;
    readonly shards: number;
    readonly tagPrefix: string;
    /** The run's tenants (`[undefined]` single-tenant): each has its own in-progress rows. */
    readonly tenants: readonly (string | undefined)[];
  },
): Promise<string | undefined> {
  for (const effectId of input.effectIds) {
    const status = await statuses.get(effectId);
    if (status === undefined) continue; // its accept never wrote one
    if (status.state !== 'done')
      return `revalidation ${effectId} is still '${status.state}' after every fan-out step ran: ${JSON.stringify(status)}`;
    const found = input.found.get(effectId)?.size ?? 0;
    if (status.marked > found)
      return `revalidation ${effectId} counts ${status.marked} pages marked, but found ${found} with META`;
  }
  for (const tenant of input.tenants) {
    for (let shard = 0; shard < input.shards; shard++) {
      for (const [key, entry] of await inProgress.read(tenant, shard)) {
        if (!key.includes(input.tagPrefix)) continue;
        return `in-progress entry ${key} of ${entry.effectId} is left on shard ${shard} after every fan-out finished`;
      }
    }
  }
  return undefined;
}
