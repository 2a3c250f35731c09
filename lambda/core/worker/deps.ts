/**
 * What the regeneration queue's worker is given and reports: one message, its deps, and what
 * became of the message. Apart from the dispatcher, so the handlers of each message kind import
 * these without importing the dispatcher that imports them.
 */
import type { Disposition } from '../decision.js';
import type { Idempotency } from '../idempotency.js';
import type { RegenerateDeps } from '../regenerate/deps.js';
import type { FanOutDeps } from '../revalidate/fan-out.js';
import type { PurgeQueue } from '../revalidate/ports.js';
import type { RegenerationCaller } from '../page/regeneration.js';

/** One SQS record, as the worker needs it. */
export interface WorkerMessage {
  readonly messageId: string;
  readonly body: string;
  /** How many times SQS has handed this message out, this time included. */
  readonly receiveCount: number;
  readonly groupId: string | undefined;
}

/** A regeneration's deps, and the worker's own: idempotency, receive budget, fan-outs, purges. */
export interface WorkerDeps extends RegenerateDeps, RegenerationCaller {
  readonly idempotency: Idempotency;
  /** Receives after which a retryable failure is dead-lettered instead of retried. */
  readonly maxReceiveCount: number;
  /** Revalidation fan-out steps, queued beside intents (`revalidate/fan-out.ts`). */
  readonly fanOut?: FanOutDeps | undefined;
  /** A flagged intent's soft purge, once its page is published (`revalidate/soft-purge.ts`). */
  readonly purgeQueue?: PurgeQueue | undefined;
}

/** The disposition of one message, with what the log line needs to find it. */
export type MessageReport = Disposition & {
  readonly idempotencyKey: string;
  readonly cacheKeyHash: string | undefined;
};
