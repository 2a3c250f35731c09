import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import {
  DEFERRED_ONLY_INPUT,
  resumeDeferredOnly,
  runSweep,
  taskLogFields,
  MAX_LOGGED_KEYS,
  SweeperMetric,
  type SweepDeps,
} from '../core/operate/sweep.js';
import { runAlone, type SweepLeaseDeps } from '../core/operate/sweep-lease.js';
import { MetricUnit, publishMetrics } from '../shared/observability.js';

export { DEFERRED_ONLY_INPUT, SweeperMetric };

const isDeferredOnly = (event: unknown): boolean =>
  typeof event === 'object' &&
  event !== null &&
  (event as { part?: unknown }).part === DEFERRED_ONLY_INPUT.part;

export interface SweeperHandlerOptions {
  readonly deps: SweepDeps;
  /** One run at a time: the sweep lease. Without it every invocation sweeps. */
  readonly lease?: SweepLeaseDeps | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/**
 * The sweeper Lambda (EventBridge, every 5 minutes): runs the sweep, emits each count as an EMF
 * metric (zeros too, so an alarm sees data) and writes one log line with the affected keys. A
 * part that failed is logged and rethrown after the others reported, so the Lambda counts an Error.
 */
export function createSweeperHandler(options: SweeperHandlerOptions) {
  const { deps, logger, metrics, lease } = options;
  return middy(async (event: ScheduledEvent, _context: Context): Promise<void> => {
    // Deferred intents alone: no sweep lease (two runs in one window send one message each).
    const run = () => (isDeferredOnly(event) ? resumeDeferredOnly(deps) : runSweep(deps));
    const outcome =
      lease === undefined
        ? { ran: true as const, result: await run() }
        : await runAlone(lease, run);
    if (!outcome.ran) {
      logger.info('sweep skipped: another run holds the sweep lease', { heldBy: outcome.heldBy });
      return;
    }
    const report = outcome.result;
    const count = (name: string, value: number) => metrics.addMetric(name, MetricUnit.Count, value);
    const fields: Record<string, unknown> = {};
    if (report.tasks !== undefined) {
      const t = report.tasks;
      count(SweeperMetric.MissingTasks, t.missing.length);
      count(SweeperMetric.FailedTasks, t.failed.length);
      count(SweeperMetric.AbandonedLeases, t.abandoned.length);
      count(SweeperMetric.FailingPages, t.failing.length);
      count(SweeperMetric.BrokenPages, t.broken.length);
      count(SweeperMetric.StartedNotCompleted, t.startedOpen);
      Object.assign(fields, taskLogFields(t));
    }
    if (report.orphans !== undefined) {
      const o = report.orphans;
      count(SweeperMetric.BodiesListed, o.listed);
      count(SweeperMetric.OrphanBodiesRetired, o.retired.length);
      count(SweeperMetric.UnlistedVersionsDeleted, o.versionsForgotten);
      fields.orphans = { ...o, retired: o.retired.slice(0, MAX_LOGGED_KEYS) };
      fields.orphansRetired = o.retired.length;
    }
    if (report.purgesFlushed !== undefined) {
      count(SweeperMetric.PendingPurgesFlushed, report.purgesFlushed);
      fields.purgesFlushed = report.purgesFlushed;
    }
    if (report.fanOutsResumed !== undefined) {
      count(SweeperMetric.FanOutsResumed, report.fanOutsResumed.length);
      fields.fanOutsResumed = report.fanOutsResumed.slice(0, MAX_LOGGED_KEYS);
    }
    if (report.deferred !== undefined) {
      count(SweeperMetric.DeferredIntentsResumed, report.deferred.requeued);
      count(SweeperMetric.DeferredIntentsWaiting, report.deferred.waiting);
      fields.deferred = { ...report.deferred, unreadable: report.deferred.unreadable.slice(0, 20) };
    }
    const errors = report.errors.map(({ part, error }) => ({ part, error: String(error) }));
    const attention =
      errors.length > 0 ||
      (report.tasks !== undefined &&
        report.tasks.missing.length + report.tasks.failed.length + report.tasks.abandoned.length >
          0);
    if (attention) logger.warn('sweep found work that needs an operator', { ...fields, errors });
    else logger.info('sweep', fields);
    const first = report.errors[0];
    if (first !== undefined) throw first.error;
  })
    .use(injectLambdaContext(logger))
    .use(publishMetrics(metrics));
}
