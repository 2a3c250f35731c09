/**
 * Alarms on what viewers feel: CloudFront answering 5xx, pages rendered in the request instead
 * of served from the cache, renders that fail, and regenerations that were never queued.
 */
import { MathExpression, Metric, type Alarm, type CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import type { Construct } from 'constructs';
import { inUsEast1Condition, stackRegion } from './isr-region.js';
import { ALARM_PERIOD, isrAlarm, OriginMetricName, originMetric } from './isr-metrics.js';
import type { IsrSettings } from './isr-settings.js';

/**
 * A rate needs this many requests in a period to count: below it, one failure is a large
 * percentage, and a rate alarm on a quiet site would report noise (absolute failures still
 * page through `originErrors` and `deadLetters`).
 */
export const MIN_REQUESTS_FOR_RATE = 100;

export interface ViewerAlarms {
  /**
   * CloudFront answered more than `cdnErrorRateAlarmThresholdPercent` (default 5 %) of requests
   * with 5xx for 10 minutes, with at least 100 requests per 5 minutes. CloudFront publishes its
   * metrics in us-east-1 only and alarms cannot watch another region, so this alarm exists only
   * in a us-east-1 stack (an environment-agnostic stack creates it when deployed there).
   */
  readonly cdnErrorRate: Alarm | undefined;
  /**
   * More than `missRateAlarmThresholdPercent` (default 50 %) of page requests were misses
   * (rendered in the request) for 15 minutes, with at least 100 per 5 minutes: the cache is not
   * working (a wiped table, a cache key with an unbounded parameter, random-path traffic).
   */
  readonly missRate: Alarm;
  /**
   * More than `renderFailureRateAlarmThresholdPercent` (default 5 %) of page requests were
   * answered 5xx by the origin (a render refused or failed, a store unreachable) for 10 minutes.
   */
  readonly renderFailureRate: Alarm;
  /**
   * The origin failed to queue any regeneration in 5 minutes (threshold 0). The SDK already
   * retried, so each is a stale page that stays stale until a later stale hit re-queues it.
   */
  readonly enqueueFailures: Alarm;
}

export interface ViewerAlarmsInput {
  readonly distribution: IDistribution;
  readonly settings: IsrSettings;
}

export function createViewerAlarms(scope: Construct, input: ViewerAlarmsInput): ViewerAlarms {
  const { settings } = input;
  return {
    cdnErrorRate: cdnErrorRateAlarm(scope, input.distribution, settings),
    missRate: isrAlarm(scope, 'MissRateAlarm', {
      description:
        'ISR: most page requests are rendered in the request instead of served from the cache. ' +
        'Runbook: check the cache key (allowedQueryParams, tenantHeader) for unbounded values, ' +
        'the table for lost META rows, and CloudFront for random-path traffic.',
      metric: originRate(OriginMetricName.Misses, [OriginMetricName.Hits, OriginMetricName.Stale]),
      threshold: settings.missRateAlarmThresholdPercent,
      evaluationPeriods: 3,
    }),
    renderFailureRate: isrAlarm(scope, 'RenderFailureRateAlarm', {
      description:
        'ISR: the origin answers many page requests with 5xx. Runbook: read the origin log lines ' +
        'with status >= 500 (decision render-rejected, lease-held, store errors) and check the upstream.',
      metric: originRate(OriginMetricName.Unavailable, [
        OriginMetricName.Hits,
        OriginMetricName.Stale,
        OriginMetricName.Misses,
      ]),
      threshold: settings.renderFailureRateAlarmThresholdPercent,
      evaluationPeriods: 2,
    }),
    enqueueFailures: isrAlarm(scope, 'EnqueueFailuresAlarm', {
      description:
        'ISR: the origin could not queue regenerations, so stale pages stay stale. Runbook: read ' +
        'the origin log lines with enqueue=enqueue-failed; check SQS throttling and the origin role.',
      metric: originMetric(OriginMetricName.EnqueueFailures, ALARM_PERIOD),
      threshold: 0,
    }),
  };
}

/**
 * Percentage of `part` among `part` and `others` (each counted once per page response), or 0
 * in a period with fewer than MIN_REQUESTS_FOR_RATE responses. FILL turns a count with no
 * data point (nothing of that kind happened) into 0, so the sum exists whenever any does.
 */
function originRate(part: OriginMetricName, others: readonly OriginMetricName[]): MathExpression {
  const ids = ['part', ...others.map((_, index) => `other${index}`)];
  const total = ids.map((id) => `FILL(${id}, 0)`).join(' + ');
  return new MathExpression({
    expression: `IF((${total}) >= ${MIN_REQUESTS_FOR_RATE}, 100 * FILL(part, 0) / (${total}), 0)`,
    usingMetrics: Object.fromEntries(
      [part, ...others].map((name, index) => [ids[index], originMetric(name, ALARM_PERIOD)]),
    ),
    label: `${part} (% of page requests)`,
    period: ALARM_PERIOD,
  });
}

/** CloudFront's own 5xx rate (Region=Global), counted once the period had enough requests. */
function cdnErrorRateAlarm(
  scope: Construct,
  distribution: IDistribution,
  settings: IsrSettings,
): Alarm | undefined {
  const where = stackRegion(scope);
  if (where === 'elsewhere') return undefined;
  const cloudFront = (metricName: string, statistic: string) =>
    new Metric({
      namespace: 'AWS/CloudFront',
      metricName,
      dimensionsMap: { DistributionId: distribution.distributionId, Region: 'Global' },
      statistic,
      period: ALARM_PERIOD,
    });
  const alarm = isrAlarm(scope, 'CdnErrorRateAlarm', {
    description:
      'ISR: CloudFront answers many requests with 5xx. Runbook: compare with the origin alarms ' +
      '(errors, throttles, render failures); if they are quiet, check the distribution and its origin settings.',
    metric: new MathExpression({
      expression: `IF(FILL(requests, 0) >= ${MIN_REQUESTS_FOR_RATE}, rate, 0)`,
      usingMetrics: {
        rate: cloudFront('5xxErrorRate', 'Average'),
        requests: cloudFront('Requests', 'Sum'),
      },
      label: 'CloudFront 5xx error rate (%)',
      period: ALARM_PERIOD,
    }),
    threshold: settings.cdnErrorRateAlarmThresholdPercent,
    evaluationPeriods: 2,
  });
  if (where === 'unknown') {
    (alarm.node.defaultChild as CfnAlarm).cfnOptions.condition = inUsEast1Condition(
      scope,
      'InCloudFrontRegion',
    );
  }
  return alarm;
}
