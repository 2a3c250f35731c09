/**
 * The three signals an operator acts on: dead letters (a regeneration was given up), a backlog
 * (regenerations are not keeping up, so pages stay stale), and worker crashes (record failures are
 * reported per record and do not count as Lambda errors, so an Error is a crash or a timeout).
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  TreatMissingData,
  type IAlarmAction,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

export interface IsrAlarms {
  /** Messages are waiting in the DLQ: each one is a page whose regeneration was given up. */
  readonly deadLetters: Alarm;
  /** The oldest regeneration intent is older than the threshold: the worker is behind. */
  readonly queueAge: Alarm;
  /** The worker function itself failed (crash, timeout, out of memory). */
  readonly workerErrors: Alarm;
}

export interface IsrAlarmsInput {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly worker: IFunction;
  readonly queueAgeThreshold: Duration;
  readonly deadLetterThreshold: number;
  readonly workerErrorsThreshold: number;
  readonly actions: readonly IAlarmAction[];
}

const PERIOD = Duration.minutes(5);

export function createIsrAlarms(scope: Construct, input: IsrAlarmsInput): IsrAlarms {
  const alarms: IsrAlarms = {
    deadLetters: new Alarm(scope, 'DeadLettersAlarm', {
      alarmDescription: 'ISR: regeneration intents reached the dead-letter queue',
      metric: input.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: PERIOD,
        statistic: 'Maximum',
      }),
      threshold: input.deadLetterThreshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    queueAge: new Alarm(scope, 'QueueAgeAlarm', {
      alarmDescription: 'ISR: the oldest regeneration intent is waiting too long',
      metric: input.queue.metricApproximateAgeOfOldestMessage({
        period: PERIOD,
        statistic: 'Maximum',
      }),
      threshold: input.queueAgeThreshold.toSeconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
    workerErrors: new Alarm(scope, 'WorkerErrorsAlarm', {
      alarmDescription: 'ISR: the worker function failed (crash, timeout or out of memory)',
      metric: input.worker.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      threshold: input.workerErrorsThreshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }),
  };
  for (const alarm of alarmsOf(alarms)) alarm.addAlarmAction(...input.actions);
  return alarms;
}

export function alarmsOf(alarms: IsrAlarms): Alarm[] {
  return [alarms.deadLetters, alarms.queueAge, alarms.workerErrors];
}
