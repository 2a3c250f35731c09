/**
 * `npm start`'s stand-in for the sweeper's minute schedule (lib/isr-budget.ts): while a
 * regeneration budget is set, deferred intents are re-queued every minute, so none waits for a
 * stale hit locally either.
 */
import { SqsRegenerationQueue } from '../lambda/adapters/regeneration-queue/sqs.js';
import { systemClock } from '../lambda/core/clock.js';
import { resumeDeferred } from '../lambda/core/operate/resume-deferred.js';
import type { AwsClients } from '../lambda/shared/aws-clients.js';
import { createBudgetDeps } from '../lambda/shared/budget.js';

const EVERY_MS = 60_000;

/** Starts the catch-up; `stop` waits for a run in progress. Nothing runs without a budget. */
export function startDeferredCatchUp(
  config: {
    readonly tableName: string;
    readonly queueUrl: string;
    readonly regenerationBudget?: number | undefined;
  },
  clients: AwsClients,
  onError: (error: unknown) => void,
): { stop(): Promise<readonly string[]> } {
  const budget = createBudgetDeps(config, clients);
  if (budget === undefined) return { stop: () => Promise.resolve([]) };
  const queue = new SqsRegenerationQueue({ client: clients.sqs, queueUrl: config.queueUrl });
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = resumeDeferred({ ...budget, queue, clock: systemClock }).catch(onError);
  }, EVERY_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
      return [];
    },
  };
}
