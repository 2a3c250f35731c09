/**
 * Targeted plans: a fraction of the model check's plans built around one page and one race that
 * random schedules rarely make (issue 19). Each names its actors and drives them with `run`
 * steps (one actor, up to n more writes, the others parked), then lets a random tail finish:
 * - a publish that drops a tag racing one that re-adds it (the tag index's guard);
 * - a revalidation landing between a render's start and its publish (the revalidation mark);
 * - the sweeper between a render's writes, or after a revalidation whose purge was throttled;
 * - a hold, then an `expire` of the held page, then a viewer;
 * - a tag revalidation marking in the background, step by step, among renders and viewers, with
 *   a second revalidation of the tag while it marks, and its steps duplicated, crashed, dropped.
 */
import fc from 'fast-check';
import { fanOutArbitrary } from './fan-out.js';
import type { MessagePlan, OriginPlan, Plan, Step } from './plan.js';
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
export const forcedMessage = (forced = true): MessagePlan => ({
  key: 0,
  forced,
  deliveries: [calm],
});

/** Releases `actor`'s calls until it has made `writes` more writes (or finished). */
export const run = (actor: string, writes = 99): Step => ({ run: actor, writes });
/** Past the page's freshness: a worker finding META fresh does not render. */
const STALE: Step = { advance: REVALIDATE_SECONDS + 1 };
/** Up to `n` random picks among whoever is left: the race's aftermath in any order. */
export const tail = fc.array(fc.record({ pick: fc.nat() }), { maxLength: 12 });
/** How far the interrupted actor gets: the race needs it stopped at one particular write. */
export const cut = fc.integer({ min: 1, max: 9 });

export const base: Omit<Plan, 'schedule'> = {
  keys: 1,
  messages: [],
  origins: [],
  rollbacks: [],
  revalidations: [],
  holds: [],
  sweeps: [],
  cdn: [],
  fanOut: { batchSize: 1, deliveries: [] },
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
      // A tag's pages are marked by fan-out steps: the first two, in full, right after the 202.
      schedule: [
        ...(prelude ? [run('w0.0'), STALE] : []),
        run(racer, k),
        run('v0'),
        run('f0.0'),
        run('f1.0'),
        ...tail,
      ],
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
    const viewer: OriginPlan = { skew: 0, key: 0, container: 0 };
    return {
      ...base,
      messages: [forcedMessage(false)],
      origins: [viewer],
      holds: [hold],
      revalidations: [expire],
      schedule: [run('h0'), run('v0'), run('o0'), ...tail],
    };
  });

const skew = fc.integer({
  min: -Math.floor(LEASE_SECONDS / 4),
  max: Math.floor(LEASE_SECONDS / 4),
});

/**
 * Background marking: two pages published with the tag `all`, then (maybe between a viewer
 * whose container caches its read of the in-progress rows and that container's next request
 * for the page) a tag revalidation; then its fan-out steps
 * (one or two pages each; duplicated, crashed, dropped as planned), renders of both pages,
 * viewers in two containers and maybe a second revalidation of the tag (two stales, or a stale
 * then an expire) in any order; time jumps, maybe past the stall threshold, and maybe a
 * sweeper that resends a stalled step.
 */
export const backgroundRace = fc
  .record({
    first: fc.constantFrom('stale' as const, 'expire' as const),
    second: fc.option(fc.constantFrom('stale' as const, 'expire' as const), { nil: undefined }),
    skews: fc.tuple(skew, skew),
    viewers: fc.array(fc.record({ key: fc.nat(), container: fc.integer({ min: 0, max: 1 }) }), {
      minLength: 1,
      maxLength: 3,
    }),
    viewerFirst: fc.boolean(),
    fanOut: fanOutArbitrary(fc.constant(0)),
    middle: fc.array(
      fc.oneof(
        { weight: 6, arbitrary: fc.record({ pick: fc.nat() }) },
        {
          weight: 2,
          arbitrary: fc.record({ run: fc.nat(), writes: fc.integer({ min: 1, max: 3 }) }),
        },
        { weight: 1, arbitrary: fc.record({ advance: fc.integer({ min: 1, max: 40 }) }) },
      ),
      { maxLength: 16 },
    ),
    sweep: fc.boolean(),
    tail,
  })
  .map(({ first, second, skews, viewers, viewerFirst, fanOut, middle, sweep, tail }): Plan => {
    const revalidation = (mode: 'stale' | 'expire', at: number): RevalidationPlan => ({
      skew: skews[at],
      by: 'tag',
      tag: 'all',
      mode,
      regenerate: false,
    });
    // Two stales, or a stale then an expire: the first is always `stale` when there are two.
    const revalidations =
      second === undefined
        ? [revalidation(first, 0)]
        : [revalidation('stale', 0), revalidation(second, 1)];
    const page = (key: number): MessagePlan => ({ key, forced: true, deliveries: [calm] });
    // A viewer first: it and the next request of its container ask for one page, around the
    // revalidation, so the second can only be honoured by a read newer than the first's.
    const origins = viewers.map((viewer, index) =>
      viewerFirst && index < 2
        ? { key: 0, container: 0, skew: 0 }
        : { ...viewer, key: viewer.key % 2, skew: 0 },
    );
    return {
      ...base,
      keys: 2,
      // Both pages published first, then rendered again by the two later deliveries.
      messages: [page(0), page(1), page(0), page(1)],
      origins,
      revalidations,
      sweeps: sweep ? [{ skew: 0, laps: 2 }] : [],
      fanOut,
      schedule: [
        run('w0.0'),
        run('w1.0'),
        ...(viewerFirst ? [run('o0')] : []),
        run('v0'),
        ...(viewerFirst ? [run('o1')] : []),
        ...middle,
        ...(second === undefined ? [] : [run('v1')]),
        { advance: REVALIDATE_SECONDS + 1 },
        ...tail,
      ],
    };
  });

/** One of the targeted races, each as likely as the others. */
export const targetedPlanArbitrary: fc.Arbitrary<Plan> = fc.oneof(
  tagRace,
  revalidationRace,
  sweeperRace,
  holdThenExpire,
  backgroundRace,
);
