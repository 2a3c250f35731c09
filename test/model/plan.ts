/**
 * What a model-check run is made of: its plan (deliveries with their faults, viewers, writers,
 * the sweeper, the CDN, fan-out steps and the schedule that interleaves them), how plans are
 * drawn, and the guards a negative control can remove.
 */
import fc from 'fast-check';
import { fanOutArbitrary, type FanOutPlan } from './fan-out.js';
import { targetedPlanArbitrary } from './plans.js';
import {
  conflictingRace,
  failedInProgressReads,
  passRace,
  retriedRevalidation,
  variantRace,
} from './races.js';
import {
  sweeperArbitraries,
  type CdnOutcome,
  type SweeperMutation,
  type SweepPlan,
} from './sweeper.js';
import { inTenants, tenantBits, tenantRace } from './tenant-plans.js';
import { writerArbitraries, type HoldPlan, type RevalidationPlan } from './writers.js';
import { CrashPoint, LEASE_SECONDS, type ActorFaults } from './world.js';

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
  /** Its read of the in-progress rows fails (a throttle, a timeout): the origin answers 5xx. */
  readonly failInProgressRead?: boolean | undefined;
  /** It asks for the page's RSC variant (`rsc: 1`), its own key under the page's variant tag. */
  readonly variant?: boolean | undefined;
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
  /**
   * Every transaction stays ongoing at DynamoDB until the schedule lets it through, so the
   * requests meeting it are refused as AWS documents (`TransactionConflict`; `World.conflicts`).
   */
  readonly conflicts?: boolean | undefined;
  /** The run's first renders answer `private`: the key is marked for pass (hit-for-pass). */
  readonly passRenders?: number | undefined;
  /**
   * Multi-tenant mode: two tenants with the same paths (`tenant-plans.ts`); each viewer,
   * message and revalidation acts for one of them.
   */
  readonly tenants?: boolean | undefined;
  readonly schedule: readonly Step[];
}

/**
 * Time an invocation has left when it claims REQ# (model ms): a short one runs out at the next
 * jump of time, a long one outlives most of a schedule. Every clock is the model's, so a run
 * depends on its plan alone and a seed replays the same way on any machine.
 */
const REMAINING_MS = [5_000, 60_000] as const;
export const MAX_REMAINING_MS = Math.max(...REMAINING_MS);

/** Each actor's clock is off by up to a quarter lease either way: up to half a lease between two. */
export const MAX_SKEW_SECONDS = LEASE_SECONDS / 4;

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
    fc.record({
      ...faultsArbitrary,
      key: fc.nat(),
      container: fc.integer({ min: 0, max: 1 }),
      variant: fc.boolean(),
      failInProgressRead: fc.oneof(
        { weight: 5, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
    }),
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
 * A random plan whose first revalidation may die right after its n-th write (then retried with
 * the same Idempotency-Key): issue 33's crashes, among every other fault.
 */
const randomWithRetries: fc.Arbitrary<Plan> = fc
  .tuple(
    randomPlanArbitrary,
    fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined, freq: 3 }),
    fc.boolean(),
  )
  .map(([plan, crashAfterWrites, conflicts]) => ({
    ...plan,
    conflicts,
    revalidations: plan.revalidations.map((revalidation, index) =>
      index === 0 ? { ...revalidation, crashAfterWrites } : revalidation,
    ),
  }));

/**
 * Half of `plans` moved into two tenants with the same paths. The tenant draws come after the
 * plan's: a plan left single-tenant is the very plan (and run) it was before tenants.
 */
const maybeInTenants = (plans: fc.Arbitrary<Plan>): fc.Arbitrary<Plan> =>
  fc
    .tuple(plans, fc.boolean(), tenantBits)
    .map(([plan, tenants, bits]) => (tenants ? inTenants(plan, bits) : plan));

/** Multi-tenant plans alone (`--plans=tenants`): random ones, and the tenant race. */
export const tenantPlans: fc.Arbitrary<Plan> = fc.oneof(
  fc.tuple(randomWithRetries, tenantBits).map(([plan, bits]) => inTenants(plan, bits)),
  tenantRace,
);

/**
 * Half the plans are random (RSC variants, failed in-progress reads and crashed revalidations
 * among them, and transaction conflicts in half); a quarter are targeted races around one page (`plans.ts`), which random
 * schedules make too rarely for their guards' negative controls to be caught; a quarter are
 * issue 33's races: a variant's first render across a path revalidation, a revalidation
 * crashed and retried, viewers whose read of the in-progress rows fails, a variant marked for
 * pass across a path revalidation, background marking under transaction conflicts. Half the
 * random plans and half of issue 33's races run with two tenants (`maybeInTenants`).
 */
export const planArbitrary: fc.Arbitrary<Plan> = fc.oneof(
  { weight: 2, arbitrary: maybeInTenants(randomWithRetries) },
  { weight: 1, arbitrary: targetedPlanArbitrary },
  {
    weight: 1,
    arbitrary: maybeInTenants(
      fc.oneof(variantRace, passRace, retriedRevalidation, failedInProgressReads, conflictingRace),
    ),
  },
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
  | 'restart-fan-outs'
  | 'in-progress-fails-open'
  | 'origin-ignores-in-progress'
  | 'no-variant-tag-time'
  | 'variants-keep-pass'
  | 'tenant-crossed-tag-times'
  | 'pass-crossed-tenant'
  | 'tenant-crossed-purge'
  | 'worker-crossed-tenant'
  | SweeperMutation;
