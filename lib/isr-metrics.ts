/**
 * Building blocks of the alarms: the origin's own metrics, as its handler emits them
 * (Powertools EMF: namespace `FaceTheoryIsr`, dimension `service=isr-origin`; a test holds these
 * names to the handler), and one shape of alarm.
 */
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Metric,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';

export const METRICS_NAMESPACE = 'FaceTheoryIsr';
export const ORIGIN_SERVICE_DIMENSION = { service: 'isr-origin' } as const;
export const WORKER_SERVICE_DIMENSION = { service: 'isr-worker' } as const;
export const SWEEPER_SERVICE_DIMENSION = { service: 'isr-sweeper' } as const;

/** One of the worker's or the sweeper's own metrics (Powertools: `service` is its dimension). */
export const serviceMetric = (
  dimension: { readonly service: string },
  metricName: string,
  options: { readonly period: Duration; readonly statistic: string; readonly label?: string },
): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { ...dimension },
    ...options,
  });

/** One count per page response: which cache outcome, or a 5xx the origin answered. */
export const OriginMetricName = {
  Hits: 'CacheHits',
  Stale: 'CacheStale',
  Misses: 'CacheMisses',
  Unavailable: 'OriginUnavailable',
  /** A render the cache refused (502). */
  Refused: 'RenderRefused',
  /** A render that failed in the request. */
  RenderFailures: 'RenderFailures',
  EnqueueFailures: 'EnqueueFailures',
  /** An answer the origin passed through from the upstream (every reason, hit-for-pass included). */
  PassThrough: 'PassThrough',
  /** Of those, the ones a live hit-for-pass mark sent through. */
  HitForPass: 'HitForPass',
} as const;
export type OriginMetricName = (typeof OriginMetricName)[keyof typeof OriginMetricName];

/** The per-period sum of one of the origin's counts. */
export const originMetric = (metricName: OriginMetricName, period: Duration): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { ...ORIGIN_SERVICE_DIMENSION },
    statistic: 'Sum',
    period,
  });

/** Every alarm evaluates 5-minute periods. */
export const ALARM_PERIOD = Duration.minutes(5);

/** An alarm above a threshold, where missing data (no traffic, no failures) counts as fine. */
export function isrAlarm(
  scope: Construct,
  id: string,
  options: {
    readonly metric: IMetric;
    readonly threshold: number;
    readonly description: string;
    /** Consecutive periods over the threshold before it fires. @default 1 */
    readonly evaluationPeriods?: number;
  },
): Alarm {
  return new Alarm(scope, id, {
    alarmDescription: options.description,
    metric: options.metric,
    threshold: options.threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: options.evaluationPeriods ?? 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
}
