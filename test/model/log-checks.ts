/**
 * What is checked on a run's event log alone (leases, publishes, holds), and the log's digest:
 * the same for two runs of one plan exactly when they made the same calls in the same order.
 */
import { createHash } from 'node:crypto';
import { InvariantViolation } from './context.js';
import { MAX_SKEW_SECONDS } from './plan.js';
import type { ModelEvent } from './world.js';

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
  /** The lease passes to the event's token; the one before it, if any, has ended. */
  const take = (event: { actor: string; pk: string; token: string; expiresAt: number }) => {
    const previous = holder.get(event.pk);
    if (previous !== undefined) ended.add(previous);
    holder.set(event.pk, event.token);
    expiresAt.set(event.token, event.expiresAt);
    leaseOf.set(event.actor, event.token);
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
      case 'seize':
        take(event);
        break;
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
        take(event);
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
      case 'pass':
      case 'passed':
        break;
    }
  }
}
