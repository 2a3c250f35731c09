/**
 * Issue 33's targeted races, on top of `plans.ts`' own: a variant's first render across a path
 * revalidation, a variant marked for pass across one, a revalidation crashed after any write
 * and retried, viewers whose read of the in-progress rows fails, and background marking under
 * DynamoDB's transaction conflict rule.
 */
import fc from 'fast-check';
import { fanOutArbitrary } from './fan-out.js';
import type { OriginPlan, Plan } from './plan.js';
import { backgroundRace, base, cut, forcedMessage, run, tail } from './plans.js';
import type { RevalidationPlan } from './writers.js';

/**
 * What the variant races share: the page's RSC variant asked for first (in container 0), the
 * page revalidated by path, and the later viewers of the key, each in its drawn container.
 */
function variantFirst(
  mode: RevalidationPlan['mode'],
  viewers: readonly { readonly container: number; readonly variant: boolean }[],
): { revalidation: RevalidationPlan; first: OriginPlan; later: OriginPlan[] } {
  return {
    revalidation: { skew: 0, by: 'path', tag: 'all', mode, regenerate: false },
    first: { skew: 0, key: 0, container: 0, variant: true },
    later: viewers.map((viewer): OriginPlan => ({ skew: 0, key: 0, ...viewer })),
  };
}

/**
 * A page's RSC variant rendered for the first time (a viewer's MISS, in the origin), stopped
 * after `k` writes (lease taken, body written...), while a revalidation of the page by path is
 * accepted in full; then the render goes on, and viewers in both containers ask for the variant
 * (issue 33, fix 1: the variant is in no index yet, only its variant tag's time stops it).
 */
export const variantRace = fc
  .record({
    k: cut,
    mode: fc.constantFrom('stale' as const, 'expire' as const),
    page: fc.boolean(),
    viewers: fc.array(
      fc.record({ container: fc.integer({ min: 0, max: 1 }), variant: fc.boolean() }),
      {
        minLength: 1,
        maxLength: 2,
      },
    ),
    tail,
  })
  .map(({ k, mode, page, viewers, tail }): Plan => {
    const { revalidation, first, later } = variantFirst(mode, viewers);
    return {
      ...base,
      // The page published first (or not: its variant is then the first of the key rendered).
      messages: page ? [forcedMessage()] : [],
      origins: [first, ...later],
      revalidations: [revalidation],
      schedule: [
        ...(page ? [run('w0.0')] : []),
        run('o0', k),
        run('v0'),
        run('o0'),
        ...later.map((_, index) => run(`o${index + 1}`)),
        ...tail,
      ],
    };
  });

/**
 * Hit-for-pass (issue 33, fix 3): the upstream's first render answers `private`, so the page's
 * RSC variant, asked for first, is marked for pass; the upstream is fixed, the page revalidated
 * by path (its variants marked by fan-out steps, in the background), and viewers ask for the
 * variant and the page again in either container.
 */
export const passRace = fc
  .record({
    mode: fc.constantFrom('stale' as const, 'expire' as const),
    viewers: fc.array(
      fc.record({ container: fc.integer({ min: 0, max: 1 }), variant: fc.boolean() }),
      { maxLength: 2 },
    ),
    fanOut: fanOutArbitrary(fc.constant(0)),
    tail,
  })
  .map(({ mode, viewers, fanOut, tail }): Plan => {
    const { revalidation, first, later } = variantFirst(mode, viewers);
    return {
      ...base,
      passRenders: 1,
      origins: [first, ...later],
      revalidations: [revalidation],
      fanOut,
      schedule: [run('o0'), run('v0'), ...tail],
    };
  });

/**
 * A revalidation that dies right after one of its writes (the first to the fourth: its tag's
 * time, its fan-out's start, its expected pages, its purge's record), retried with the same
 * Idempotency-Key once dead, among background marking's races (`backgroundRace`).
 */
export const retriedRevalidation: fc.Arbitrary<Plan> = fc
  .tuple(backgroundRace, fc.integer({ min: 1, max: 4 }))
  .map(([plan, crashAfterWrites]) => ({
    ...plan,
    revalidations: plan.revalidations.map((revalidation, index) =>
      index === 0 ? { ...revalidation, crashAfterWrites } : revalidation,
    ),
  }));

/**
 * Background marking's races (`backgroundRace`) where some viewers' reads of the in-progress
 * rows fail: such a request is answered an error, never the page (the origin fails closed).
 */
export const failedInProgressReads: fc.Arbitrary<Plan> = fc
  .tuple(backgroundRace, fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }))
  .map(([plan, failing]) => ({
    ...plan,
    origins: plan.origins.map((origin, index) => ({
      ...origin,
      failInProgressRead: failing[index] === true,
    })),
  }));

/**
 * Background marking's races (`backgroundRace`) under DynamoDB's transaction conflict rule,
 * with two revalidations of the tag: every transaction (fan-out starts, steps' advances, ends,
 * publishes) stays ongoing until the schedule lets it through, so others meeting it are refused
 * and retried (issue 33, fix 2).
 */
export const conflictingRace: fc.Arbitrary<Plan> = fc
  .tuple(
    backgroundRace,
    fc.constantFrom('stale' as const, 'expire' as const),
    fc.integer({ min: 1, max: 4 }),
    fc.integer({ min: 1, max: 4 }),
  )
  .map(([plan, second, k0, k1]) => {
    const [first] = plan.revalidations;
    // Both revalidations run up to a write (a transaction stays held there, ongoing), then the
    // rest: the second meets the first's fan-out start, or its own meets the first's steps.
    const schedule = plan.schedule.flatMap((step) =>
      'run' in step && step.run === 'v0'
        ? [run('v0', k0), run('v1', k1)]
        : 'run' in step && step.run === 'v1'
          ? []
          : [step],
    );
    return {
      ...plan,
      conflicts: true,
      revalidations: [first, plan.revalidations[1] ?? { ...first, mode: second }],
      schedule,
    };
  });
