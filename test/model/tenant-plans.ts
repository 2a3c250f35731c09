/**
 * Multi-tenant plans (issue 33): a plan moved into two tenants with the same paths, each of its
 * viewers, messages and revalidations for one of them; and the targeted race the tenant
 * control's seed finds at once (both tenants publish the same path, one revalidates it).
 */
import fc from 'fast-check';
import type { MessagePlan, OriginPlan, Plan } from './plan.js';
import { base, forcedMessage, run, tail } from './plans.js';
import type { RevalidationPlan } from './writers.js';

/** Which tenant each actor of a plan acts for, in turn (0: the first, whose keys come first). */
export const tenantBits = fc.array(fc.integer({ min: 0, max: 1 }), {
  minLength: 12,
  maxLength: 12,
});

/**
 * `plan` in multi-tenant mode: its `keys` paths for each tenant (`runKeys`), each message and
 * viewer's key moved to its tenant's copy, each revalidation for its tenant. Holds, rollbacks
 * and the seed stay on the first key (the first tenant's).
 */
export function inTenants(plan: Plan, bits: readonly number[]): Plan {
  const bit = (index: number) => bits[index % bits.length] ?? 0;
  const moved = (key: number, index: number) => (key % plan.keys) + plan.keys * bit(index);
  const offset = plan.messages.length;
  return {
    ...plan,
    tenants: true,
    messages: plan.messages.map((message, index) => ({
      ...message,
      key: moved(message.key, index),
    })),
    origins: plan.origins.map((origin, index) => ({
      ...origin,
      key: moved(origin.key, offset + index),
    })),
    revalidations: plan.revalidations.map((revalidation, index) => ({
      ...revalidation,
      tenant: bit(offset + plan.origins.length + index),
    })),
  };
}

/**
 * Both tenants publish the same path; the first tenant revalidates it (by path or by the tag
 * both tenants' renders carry), its fan-out steps run, then viewers of both tenants ask for
 * it. Or the second tenant's page is marked for pass by its first viewer's render first, and
 * its next viewer is passed to the upstream.
 */
export const tenantRace = fc
  .record({
    by: fc.constantFrom('path' as const, 'tag' as const),
    mode: fc.constantFrom('stale' as const, 'expire' as const),
    passRenders: fc.integer({ min: 0, max: 1 }),
    viewers: fc.array(fc.integer({ min: 0, max: 1 }), { minLength: 3, maxLength: 4 }),
    tail,
  })
  .map(({ by, mode, passRenders, viewers, tail }): Plan => {
    const message = (key: number): MessagePlan => ({ ...forcedMessage(), key });
    const revalidation: RevalidationPlan = {
      skew: 0,
      by,
      tag: 'all',
      mode,
      regenerate: false,
      tenant: 0,
    };
    // Viewers of both tenants, alternately, the second tenant's first (its page is not seeded,
    // so its first viewer renders): key 0 is the first tenant's, key 1 the second's.
    const origins = viewers.map((container, index): OriginPlan => ({
      skew: 0,
      key: (index + 1) % 2,
      container,
    }));
    return {
      ...base,
      tenants: true,
      passRenders,
      // A page marked for pass is passed while it has no META: the second tenant's is then
      // left to its viewers' renders (no message publishes it).
      messages: passRenders > 0 ? [message(0)] : [message(0), message(1)],
      origins,
      revalidations: [revalidation],
      // A first render that answers `private` is a viewer's (a worker's would be dead-lettered):
      // the second tenant's key is then marked for pass before anything else happens.
      schedule: [
        ...(passRenders > 0 ? [run('o0')] : []),
        run('w0.0'),
        ...(passRenders > 0 ? [] : [run('w1.0')]),
        run('v0'),
        run('f0.0'),
        run('f1.0'),
        ...origins.map((_, index) => run(`o${index}`)),
        ...tail,
      ],
    };
  });
