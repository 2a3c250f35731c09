/**
 * The publish transaction as a regeneration sees it: its answer as data, and its retries. The
 * SDK retries throttling and timeouts itself, but never a cancelled transaction: one cancelled
 * by a conflict (a contender hitting LOCK) is tried again, a few times, after a jittered wait.
 */
import { epochSeconds } from '../clock.js';
import {
  LeaseLostError,
  NewerGenerationError,
  RequestAlreadyCompletedError,
  RevalidatedDuringRenderError,
  TransactionConflictError,
} from '../errors.js';
import type { PublishInput } from '../page/ports.js';
import { systemRandom } from '../random.js';
import type { RegenerateDeps } from './deps.js';

/** How a publish ended, when it ended in an answer rather than an error. */
export type PublishResult =
  | { readonly status: 'published' }
  /** The token is no longer on LOCK, or the lease ran out: nothing was written. */
  | { readonly status: 'lease-lost' }
  /** META holds a newer generation: never go backwards. */
  | { readonly status: 'superseded'; readonly currentGeneratedAt: number | undefined }
  /** Another delivery of the intent completed its REQ# first. */
  | { readonly status: 'duplicate' }
  /** A revalidation marked META (or, with no META, LOCK) during the render: render again. */
  | { readonly status: 'revalidated' };

/** @throws TransactionConflictError past `publishAttempts`, or a store error */
export async function publish(
  deps: Pick<RegenerateDeps, 'cacheTable' | 'clock' | 'random' | 'publishAttempts'>,
  input: Omit<PublishInput, 'now'>,
): Promise<PublishResult> {
  const attempts = deps.publishAttempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.cacheTable.publishGeneration({ ...input, now: epochSeconds(deps.clock) });
      return { status: 'published' };
    } catch (error) {
      const answer = answerOf(error);
      if (answer !== undefined) return answer;
      if (!(error instanceof TransactionConflictError) || attempt >= attempts) throw error;
      await deps.clock.sleep(20 * 2 ** attempt * (1 + (deps.random ?? systemRandom)()));
    }
  }
}

/** The refusals of the publish transaction that are answers, not failures. */
function answerOf(error: unknown): PublishResult | undefined {
  if (error instanceof LeaseLostError) return { status: 'lease-lost' };
  if (error instanceof NewerGenerationError) {
    return { status: 'superseded', currentGeneratedAt: error.currentGeneratedAt };
  }
  if (error instanceof RequestAlreadyCompletedError) return { status: 'duplicate' };
  if (error instanceof RevalidatedDuringRenderError) return { status: 'revalidated' };
  return undefined;
}
