/**
 * The sweeper's schedule and the alarms on what it reports (`lambda/core/operate/sweep.ts`): work that
 * should have finished, work that failed for good, leases abandoned by renders that died.
 */
import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { SweeperMetric } from '../lambda/core/operate/sweep.js';
import { ALARM_PERIOD, isrAlarm, serviceMetric, SWEEPER_SERVICE_DIMENSION } from './isr-metrics.js';

/** How often the sweeper runs; each run reads a bounded amount (its cost is in core/operate/sweep.ts). */
export const SWEEP_INTERVAL = Duration.minutes(5);

/** An EventBridge rule invoking the sweeper every `SWEEP_INTERVAL`. */
export function scheduleSweeper(scope: Construct, sweeper: IFunction): Rule {
  return new Rule(scope, 'SweeperSchedule', {
    description: 'ISR: report stuck and failed work, retire orphan bodies',
    schedule: Schedule.rate(SWEEP_INTERVAL),
    // A missed run is made up by the next one five minutes later: no retries piling up.
    targets: [new LambdaFunction(sweeper, { retryAttempts: 0 })],
  });
}

/** Thresholds of the sweeper's alarms (the TSDoc of `SweeperAlarms` says why each). */
export const SWEEPER_ALARM_THRESHOLDS = {
  missingTasks: { threshold: 0, evaluationPeriods: 2 },
  failedTasks: { threshold: 0, evaluationPeriods: 1 },
  abandonedLeases: { threshold: 10, evaluationPeriods: 1 },
} as const;

export interface SweeperAlarms {
  /**
   * A REQ# row is still STARTED past its expected completion in two sweeps in a row (> 0 for
   * 10 minutes). A crashed delivery comes back after the queue's visibility timeout and then
   * completes or fails, which takes it out of the index; one still missing 10 minutes on was lost.
   * It stays in alarm until the row is retried or expires (`idempotencyTtlSeconds`, 1 day).
   */
  readonly missingTasks: Alarm;
  /**
   * A regeneration intent failed for good (> 0 FAILED REQ# rows): the article's "needs human
   * intervention". It stays in alarm while FAILED rows remain (until they expire, 1 day).
   */
  readonly failedTasks: Alarm;
  /**
   * More than 10 LOCK rows lie abandoned. Each is a render that died holding its lease; the next
   * render of the page takes it over, and an unrequested page's LOCK stays until its TTL (7 days
   * after the lease), so a few gather over a week of rare crashes (already paged by the
   * function error alarms). More than 10 at once means renders die in bulk.
   */
  readonly abandonedLeases: Alarm;
  /** The sweeper itself failed (> 0 errors in 5 minutes): the three above would go silent. */
  readonly sweeperErrors: Alarm;
}

const sweeperMetric = (name: string) =>
  serviceMetric(SWEEPER_SERVICE_DIMENSION, name, { period: ALARM_PERIOD, statistic: 'Maximum' });

export function createSweeperAlarms(scope: Construct, sweeper: IFunction): SweeperAlarms {
  const t = SWEEPER_ALARM_THRESHOLDS;
  return {
    missingTasks: isrAlarm(scope, 'MissingTasksAlarm', {
      description:
        'ISR: regenerations started but never finished (REQ# STARTED past expected_completion). ' +
        'Runbook: `npm run isr -- stuck` lists them with locked_by; read that request in the ' +
        "worker's logs, then `isr dlq list` / redrive if the intent was lost.",
      metric: sweeperMetric(SweeperMetric.MissingTasks),
      ...t.missingTasks,
    }),
    failedTasks: isrAlarm(scope, 'FailedTasksAlarm', {
      description:
        'ISR: regeneration intents failed for good (REQ# FAILED, with their error). Runbook: ' +
        '`npm run isr -- failed` shows each error; fix the cause, then `isr dlq redrive`.',
      metric: sweeperMetric(SweeperMetric.FailedTasks),
      ...t.failedTasks,
    }),
    abandonedLeases: isrAlarm(scope, 'AbandonedLeasesAlarm', {
      description:
        'ISR: many leases expired without a publish or release (renders died holding them). ' +
        'Runbook: `npm run isr -- stuck`; check worker/origin errors, timeouts and memory.',
      metric: sweeperMetric(SweeperMetric.AbandonedLeases),
      ...t.abandonedLeases,
    }),
    sweeperErrors: isrAlarm(scope, 'SweeperErrorsAlarm', {
      description:
        "ISR: the sweeper failed, so stuck and failed work goes unreported. Runbook: read the sweeper's " +
        'log group (the log line names the failing part: tasks, orphans or purges).',
      metric: sweeper.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
      threshold: 0,
    }),
  };
}
