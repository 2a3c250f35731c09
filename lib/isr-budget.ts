/**
 * The regeneration budget's deployed parts, present only when `regenerationBudget` is set: the
 * minute schedule that catches up on deferred intents, and the alarm on a backlog that does not
 * drain (`lambda/core/page/budget.ts`, `lambda/core/operate/resume-deferred.ts`).
 */
import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { DEFERRED_ONLY_INPUT, SweeperMetric } from '../lambda/core/operate/sweep.js';
import { ALARM_PERIOD, isrAlarm, serviceMetric, SWEEPER_SERVICE_DIMENSION } from './isr-metrics.js';

/** One catch-up a budget window: deferred intents use every minute's room, not one in five. */
export const DEFERRED_INTENTS_INTERVAL = Duration.minutes(1);

/**
 * Intents still deferred at every run for 15 minutes (the fewest waiting in each 5-minute
 * period above 0, three periods in a row). A crawler's burst drains within minutes; a backlog
 * that never empties means the budget is below the site's change rate.
 */
export const BUDGET_ALARM_THRESHOLDS = {
  deferredBacklog: { threshold: 0, evaluationPeriods: 3 },
} as const;

/** The minute schedule of the sweeper's deferred-only run; undefined without a budget. */
export function scheduleDeferredIntents(
  scope: Construct,
  sweeper: IFunction,
  budget: number | undefined,
): Rule | undefined {
  if (budget === undefined) return undefined;
  return new Rule(scope, 'DeferredIntentsSchedule', {
    description: 'ISR: re-queue regenerations the regeneration budget deferred',
    schedule: Schedule.rate(DEFERRED_INTENTS_INTERVAL),
    // A missed run is made up by the next one a minute later.
    targets: [
      new LambdaFunction(sweeper, {
        event: RuleTargetInput.fromObject(DEFERRED_ONLY_INPUT),
        retryAttempts: 0,
      }),
    ],
  });
}

/** The alarm on deferred intents that do not drain; undefined without a budget. */
export function createBudgetAlarm(scope: Construct, budget: number | undefined): Alarm | undefined {
  if (budget === undefined) return undefined;
  return isrAlarm(scope, 'BudgetBacklogAlarm', {
    description:
      `ISR: regenerations past the budget (${budget} a minute) have waited 15 minutes; stale ` +
      'pages stay stale. Runbook: `isr budget` shows the count and the waiting pages; look for a ' +
      'crawler in the CDN logs, or raise regenerationBudget.',
    metric: serviceMetric(SWEEPER_SERVICE_DIMENSION, SweeperMetric.DeferredIntentsWaiting, {
      period: ALARM_PERIOD,
      statistic: 'Minimum',
    }),
    ...BUDGET_ALARM_THRESHOLDS.deferredBacklog,
  });
}
