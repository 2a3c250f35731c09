/**
 * What an operator is paged for, each with a stated threshold, the reason in its TSDoc and a
 * one-line runbook in its description. Backend alarms are here; what viewers feel (CloudFront
 * errors, misses, failed renders, dropped regenerations) is in `isr-viewer-alarms.ts`, stuck and
 * failed work (the sweeper's reports) in `isr-sweeper.ts`.
 */
import { MathExpression, type Alarm, type IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ALARM_PERIOD, isrAlarm } from './isr-metrics.js';
import type { IsrSettings } from './isr-settings.js';
import { createSweeperAlarms, type SweeperAlarms } from './isr-sweeper.js';
import { createBudgetAlarm } from './isr-budget.js';
import { createViewerAlarms, type ViewerAlarms } from './isr-viewer-alarms.js';

export interface IsrAlarms extends ViewerAlarms, SweeperAlarms {
  /**
   * New messages reached the DLQ in 5 minutes (more than `deadLetterAlarmThreshold`, default 0):
   * each is a page whose regeneration was given up. It returns to OK once none arrive, so every
   * new batch of letters notifies again, even while older ones still wait in the queue.
   */
  readonly deadLetters: Alarm;
  /**
   * New purges reached the purge queue's DLQ in 5 minutes (more than
   * `purgeDeadLetterAlarmThreshold`, default 0): a purge the purger could not read, CloudFront
   * refused for good, or kept failing. The edge may keep an old page until its own expiry.
   */
  readonly purgeDeadLetters: Alarm;
  /**
   * The oldest intent is older than `queueAgeAlarmThreshold` (default 5 minutes): the worker is
   * behind, so stale pages stay stale.
   */
  readonly queueAge: Alarm;
  /**
   * The worker function failed more than `workerErrorsAlarmThreshold` (default 0) times in
   * 5 minutes. Record failures are reported per record, so an Error is a crash or a timeout.
   */
  readonly workerErrors: Alarm;
  /**
   * The origin function failed more than `originErrorsAlarmThreshold` (default 0) times in
   * 5 minutes. The handler answers its own failures with 5xx, so an Error is a crash or timeout.
   */
  readonly originErrors: Alarm;
  /**
   * The origin was throttled at all in 5 minutes (threshold 0): every throttle is a viewer
   * error, and it means the origin's reservation (`originReservedConcurrency`, when set) or the
   * account's concurrency limit is too small.
   */
  readonly originThrottles: Alarm;
  /**
   * Regenerations the budget deferred are still waiting after 15 minutes
   * (`BUDGET_ALARM_THRESHOLDS`, `isr-budget.ts`); only with `regenerationBudget` set.
   */
  readonly budgetBacklog?: Alarm | undefined;
}

export interface IsrAlarmsInput {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly purgeDeadLetterQueue: IQueue;
  readonly worker: IFunction;
  readonly origin: IFunction;
  readonly sweeper: IFunction;
  readonly distribution: IDistribution;
  readonly settings: IsrSettings;
  /** Whether the edge routes requests past the origin function to the upstream. */
  readonly routesToUpstream: boolean;
  /** Notified when an alarm fires and when it is OK again. */
  readonly actions: readonly IAlarmAction[];
}

export function createIsrAlarms(scope: Construct, input: IsrAlarmsInput): IsrAlarms {
  const { settings } = input;
  const alarms: IsrAlarms = {
    deadLetters: isrAlarm(scope, 'DeadLettersAlarm', {
      description:
        'ISR: new regeneration intents reached the dead-letter queue. Runbook: read the ' +
        'isr-error-code/isr-error-message attributes of the DLQ messages, fix the cause, then redrive the DLQ.',
      metric: newDeadLetters(input.deadLetterQueue),
      threshold: settings.deadLetterAlarmThreshold,
    }),
    purgeDeadLetters: isrAlarm(scope, 'PurgeDeadLettersAlarm', {
      description:
        'ISR: CDN purges reached the purge dead-letter queue; the edge may serve old pages. ' +
        'Runbook: read the isr-error-code/isr-error-message attributes of the purge DLQ messages ' +
        '(an AccessDenied or NoSuchDistribution is the purger role or the distribution), fix the ' +
        'cause, then redrive the purge DLQ to the purge queue.',
      metric: newDeadLetters(input.purgeDeadLetterQueue),
      threshold: settings.purgeDeadLetterAlarmThreshold,
    }),
    queueAge: isrAlarm(scope, 'QueueAgeAlarm', {
      description:
        'ISR: the oldest regeneration intent is waiting too long. Runbook: check worker errors, ' +
        'throttles and duration; raise workerMaxConcurrency if the worker is healthy but behind.',
      metric: input.queue.metricApproximateAgeOfOldestMessage({
        period: ALARM_PERIOD,
        statistic: 'Maximum',
      }),
      threshold: settings.queueAgeAlarmThreshold.toSeconds(),
    }),
    workerErrors: isrAlarm(scope, 'WorkerErrorsAlarm', {
      description:
        'ISR: the worker function failed (crash, timeout or out of memory). Runbook: read the ' +
        "worker's log group for the failing request ID; raise workerTimeout or workerMemorySize if it ran out.",
      metric: input.worker.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
      threshold: settings.workerErrorsAlarmThreshold,
    }),
    originErrors: isrAlarm(scope, 'OriginErrorsAlarm', {
      description:
        'ISR: the origin function failed (crash, timeout or out of memory); viewers got 5xx. ' +
        "Runbook: read the origin's log group for the failing request ID; check originTimeout against the upstream.",
      metric: input.origin.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
      threshold: settings.originErrorsAlarmThreshold,
    }),
    originThrottles: isrAlarm(scope, 'OriginThrottlesAlarm', {
      description:
        'ISR: the origin function was throttled; viewers got errors. Runbook: raise ' +
        'originReservedConcurrency if set, else the account limit, or look for a flood of uncached requests.',
      metric: input.origin.metricThrottles({ period: ALARM_PERIOD, statistic: 'Sum' }),
      threshold: 0,
    }),
    ...createViewerAlarms(scope, input),
    ...createSweeperAlarms(scope, input.sweeper),
    budgetBacklog: createBudgetAlarm(scope, settings.regenerationBudget),
  };
  for (const alarm of alarmsOf(alarms)) {
    alarm.addAlarmAction(...input.actions);
    alarm.addOkAction(...input.actions);
  }
  return alarms;
}

/**
 * Letters that arrived in the period. The worker dead-letters poison messages itself
 * (SendMessage: counted in the DLQ's NumberOfMessagesSent); SQS redrive, the backstop when the
 * worker crashes, moves messages without counting them as sent, but they raise
 * ApproximateNumberOfMessagesVisible. The larger of the two counts both kinds without counting
 * a worker-sent letter twice; a DLQ redriven out (visible falling) still shows what was sent.
 */
export function newDeadLetters(deadLetterQueue: IQueue): MathExpression {
  return new MathExpression({
    expression: 'IF(DIFF(FILL(visible, 0)) > FILL(sent, 0), DIFF(FILL(visible, 0)), FILL(sent, 0))',
    usingMetrics: {
      visible: deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: ALARM_PERIOD,
        statistic: 'Maximum',
      }),
      sent: deadLetterQueue.metricNumberOfMessagesSent({ period: ALARM_PERIOD, statistic: 'Sum' }),
    },
    label: 'New dead letters',
    period: ALARM_PERIOD,
  });
}

/** Every alarm of the service (the CloudFront ones only where they exist). */
export function alarmsOf(alarms: IsrAlarms): Alarm[] {
  return [
    alarms.deadLetters,
    alarms.purgeDeadLetters,
    alarms.queueAge,
    alarms.workerErrors,
    alarms.originErrors,
    alarms.originThrottles,
    alarms.missRate,
    alarms.renderFailureRate,
    alarms.enqueueFailures,
    alarms.missingTasks,
    alarms.failedTasks,
    alarms.abandonedLeases,
    alarms.sweeperErrors,
    ...(alarms.budgetBacklog === undefined ? [] : [alarms.budgetBacklog]),
    ...(alarms.cdnErrorRate === undefined ? [] : [alarms.cdnErrorRate]),
    ...(alarms.upstreamErrorRate === undefined ? [] : [alarms.upstreamErrorRate]),
  ];
}
