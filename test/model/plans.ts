/**
 * Targeted plans: a fraction of the model check's plans built around one page and one race that
 * random schedules rarely make (issue 19). Each names its actors and drives them with `run`
 * steps (one actor, up to n more writes, the others parked), then lets a random tail finish:
 * - a publish that drops a tag racing one that re-adds it (the tag index's guard);
 * - a revalidation landing between a render's start and its publish (the revalidation mark);
 * - the sweeper between a render's writes, or after a revalidation whose purge was throttled;
 * - a hold, then an `expire` of the held page, then a viewer.
 */
import fc from 'fast-check';
import type { MessagePlan, OriginPlan, Plan, Step } from './run.js';
import type { HoldPlan, RevalidationPlan } from './writers.js';
import type { CdnOutcome, SweepPlan } from './sweeper.js';
import { LEASE_SECONDS, REVALIDATE_SECONDS } from './world.js';

/** A delivery without faults: the race is the schedule's, not a crash's. */
const calm = {
  skew: 0,
  crashAfter: undefined,
  conflictOnPublish: false,
  loseAnswer: false,
  remainingMs: 60_000,
};
const forcedMessage = (forced = true): MessagePlan => ({ key: 0, forced, deliveries: [calm] });

/** Releases `actor`'s calls until it has made `writes` more writes (or finished). */
const run = (actor: string, writes = 99): Step => ({ run: actor, writes });
/** Past the page's freshness: a worker finding META fresh does not render. */
const STALE: Step = { advance: REVALIDATE_SECONDS + 1 };
/** Up to `n` random picks among whoever is left: the race's aftermath in any order. */
const tail = fc.array(fc.record({ pick: fc.nat() }), { maxLength: 12 });
/** How far the interrupted actor gets: the race needs it stopped at one particular write. */
const cut = fc.integer({ min: 1, max: 9 });

const base: Omit<Plan, 'schedule'> = {
  keys: 1,
  messages: [],
  origins: [],
  rollbacks: [],
  revalidations: [],
  holds: [],
  sweeps: [],
  cdn: [],
};

/**
 * w0 publishes (tags all, p1); w1 drops p1, stopped after `k` writes; w2 re-adds p1. Each finds
 * the page stale: time moves past its freshness before each.
 */
const tagRace = fc.record({ k: cut, tail }).map(({ k, tail }): Plan => ({
  ...base,
  messages: [forcedMessage(), forcedMessage(), forcedMessage()],
  schedule: [run('w0.0'), STALE, run('w1.0', k), STALE, run('w2.0'), ...tail],
}));

const revalidationOf = fc.record({
  skew: fc.constant(0),
  by: fc.constantFrom('path' as const, 'tag' as const),
  tag: fc.constantFrom('all' as const, 'p0' as const, 'p1' as const),
  mode: fc.constantFrom('stale' as const, 'expire' as const),
  regenerate: fc.boolean(),
});

/**
 * A render stopped after `k` writes (lease taken, body written...), a revalidation of its page
 * in full, then the rest. A prelude publish first gives META tags a tag revalidation finds.
 */
const revalidationRace = fc
  .record({
    k: cut,
    prelude: fc.boolean(),
    revalidation: revalidationOf,
    forced: fc.boolean(),
    tail,
  })
  .map(({ k, prelude, revalidation, forced, tail }): Plan => {
    const racer = prelude ? 'w1.0' : 'w0.0';
    return {
      ...base,
      messages: prelude ? [forcedMessage(), forcedMessage(forced)] : [forcedMessage(forced)],
      revalidations: [revalidation],
      schedule: [...(prelude ? [run('w0.0'), STALE] : []), run(racer, k), run('v0'), ...tail],
    };
  });

/** Throttles twice as often as the rest: a purge throttled again is the flush's hard case. */
const cdnOutcome: fc.Arbitrary<CdnOutcome> = fc.constantFrom(
  'throttle',
  'throttle',
  'accept',
  'refuse',
);

/**
 * The sweeper between a render's writes (after time has passed the orphan age, so bodies are
 * old enough to look at), or after a revalidation whose purge the CDN throttled or refused.
 */
const sweeperRace = fc
  .record({
    k: cut,
    advance: fc.integer({ min: REVALIDATE_SECONDS + 1, max: 3 * LEASE_SECONDS }),
    revalidation: fc.option(revalidationOf, { nil: undefined, freq: 4 }),
    cdn: fc.array(cdnOutcome, { minLength: 1, maxLength: 4 }),
    sweepWrites: fc.integer({ min: 1, max: 12 }),
    tail,
  })
  .map(({ k, advance, revalidation, cdn, sweepWrites, tail }): Plan => {
    const sweep: SweepPlan = { skew: 0, laps: 2 };
    return {
      ...base,
      messages: [forcedMessage(), forcedMessage()],
      revalidations: revalidation === undefined ? [] : [revalidation],
      sweeps: [sweep],
      cdn,
      schedule: [
        run('w0.0'),
        { advance },
        run('w1.0', k),
        ...(revalidation === undefined ? [] : [run('v0')]),
        run('s0', sweepWrites),
        ...tail,
      ],
    };
  });

const holdThenExpire = fc
  .record({ tail, release: fc.constant(false) })
  .map(({ tail, release }): Plan => {
    const hold: HoldPlan = { skew: 0, release };
    const expire: RevalidationPlan = {
      skew: 0,
      by: 'path',
      tag: 'all',
      mode: 'expire',
      regenerate: false,
    };
    const viewer: OriginPlan = { skew: 0, key: 0 };
    return {
      ...base,
      messages: [forcedMessage(false)],
      origins: [viewer],
      holds: [hold],
      revalidations: [expire],
      schedule: [run('h0'), run('v0'), run('o0'), ...tail],
    };
  });

/** One of the targeted races, each as likely as the others. */
export const targetedPlanArbitrary: fc.Arbitrary<Plan> = fc.oneof(
  tagRace,
  revalidationRace,
  sweeperRace,
  holdThenExpire,
);
