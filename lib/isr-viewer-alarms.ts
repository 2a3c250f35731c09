/**
 * Alarms on what viewers feel: CloudFront answering 5xx (all of them, and those the origin
 * function did not answer: the upstream's, for what the edge routes past it), pages rendered in
 * the request instead of served from the cache, renders that fail, and regenerations that were
 * never queued.
 */
import {
  MathExpression,
  Metric,
  type Alarm,
  type CfnAlarm,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { CfnCondition } from 'aws-cdk-lib';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
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
   * With an upstream: more than `upstreamErrorRateAlarmThresholdPercent` (default 1 %) of
   * CloudFront's requests got a 5xx the origin function did not answer, for 10 minutes, with at
   * least 100 requests per 5 minutes. That is CloudFront's 5xx count (requests x 5xx rate) less
   * the origin's own (its 5xx answers, errors and throttles): the upstream's answers to what the
   * edge routes past the origin, whose EMF never sees them, and CloudFront's own failures to
   * reach it. In a us-east-1 stack only, like `cdnErrorRate`.
   */
  readonly upstreamErrorRate: Alarm | undefined;
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
  readonly origin: IFunction;
  readonly settings: IsrSettings;
  /** Whether the edge routes requests past the origin function to the upstream. */
  readonly routesToUpstream: boolean;
}

export function createViewerAlarms(scope: Construct, input: ViewerAlarmsInput): ViewerAlarms {
  const { settings } = input;
  return {
    cdnErrorRate: cdnErrorRateAlarm(scope, input.distribution, settings),
    upstreamErrorRate: input.routesToUpstream ? upstreamErrorRateAlarm(scope, input) : undefined,
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
        OriginMetricName.PassThrough,
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

/** One of CloudFront's metrics of the distribution (Region=Global, published in us-east-1). */
const cloudFront = (distribution: IDistribution, metricName: string, statistic: string) =>
  new Metric({
    namespace: 'AWS/CloudFront',
    metricName,
    dimensionsMap: { DistributionId: distribution.distributionId, Region: 'Global' },
    statistic,
    period: ALARM_PERIOD,
  });

/**
 * An alarm on CloudFront's metrics exists where they are: not at all in a stack known to be
 * elsewhere (alarms cannot watch another region), under a deploy-time condition when unknown.
 */
function whereCloudFrontMetricsAre(scope: Construct, create: () => Alarm): Alarm | undefined {
  const where = stackRegion(scope);
  if (where === 'elsewhere') return undefined;
  const alarm = create();
  if (where === 'unknown') {
    const id = 'InCloudFrontRegion';
    const condition =
      (scope.node.tryFindChild(id) as CfnCondition | undefined) ?? inUsEast1Condition(scope, id);
    (alarm.node.defaultChild as CfnAlarm).cfnOptions.condition = condition;
  }
  return alarm;
}

/** CloudFront's own 5xx rate (Region=Global), counted once the period had enough requests. */
function cdnErrorRateAlarm(
  scope: Construct,
  distribution: IDistribution,
  settings: IsrSettings,
): Alarm | undefined {
  return whereCloudFrontMetricsAre(scope, () =>
    isrAlarm(scope, 'CdnErrorRateAlarm', {
      description:
        'ISR: CloudFront answers many requests with 5xx. Runbook: compare with the origin alarms ' +
        '(errors, throttles, render failures); if they are quiet, check the distribution and its origin settings.',
      metric: new MathExpression({
        expression: `IF(FILL(requests, 0) >= ${MIN_REQUESTS_FOR_RATE}, rate, 0)`,
        usingMetrics: {
          rate: cloudFront(distribution, '5xxErrorRate', 'Average'),
          requests: cloudFront(distribution, 'Requests', 'Sum'),
        },
        label: 'CloudFront 5xx error rate (%)',
        period: ALARM_PERIOD,
      }),
      threshold: settings.cdnErrorRateAlarmThresholdPercent,
      evaluationPeriods: 2,
    }),
  );
}

/** The 5xx CloudFront served that the origin function did not answer, as a share of its requests. */
function upstreamErrorRateAlarm(scope: Construct, input: ViewerAlarmsInput): Alarm | undefined {
  const { distribution, origin } = input;
  const originFailures: Record<string, IMetric> = {
    unavailable: originMetric(OriginMetricName.Unavailable, ALARM_PERIOD),
    refused: originMetric(OriginMetricName.Refused, ALARM_PERIOD),
    failed: originMetric(OriginMetricName.RenderFailures, ALARM_PERIOD),
    crashed: origin.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
    throttled: origin.metricThrottles({ period: ALARM_PERIOD, statistic: 'Sum' }),
  };
  const theOrigins = Object.keys(originFailures)
    .map((id) => `FILL(${id}, 0)`)
    .join(' + ');
  const upstream = new MathExpression({
    expression: `FILL(requests, 0) * FILL(rate, 0) / 100 - (${theOrigins})`,
    usingMetrics: {
      requests: cloudFront(distribution, 'Requests', 'Sum'),
      rate: cloudFront(distribution, '5xxErrorRate', 'Average'),
      ...originFailures,
    },
    label: '5xx the origin function did not answer',
    period: ALARM_PERIOD,
  });
  return whereCloudFrontMetricsAre(scope, () =>
    isrAlarm(scope, 'UpstreamErrorRateAlarm', {
      description:
        'ISR: CloudFront answers 5xx the origin function did not: the upstream fails what the edge ' +
        'routes to it directly (static assets, bypass paths, other methods), or CloudFront cannot reach it. ' +
        'Runbook: check the upstream and its logs; CloudFront logs (cdnLogs) show which paths fail; ' +
        'check upstreamSecret/upstreamSecretVersionId if the upstream refuses CloudFront.',
      metric: new MathExpression({
        expression:
          `IF(FILL(requests, 0) >= ${MIN_REQUESTS_FOR_RATE} AND upstream > 0, ` +
          '100 * upstream / FILL(requests, 0), 0)',
        usingMetrics: { requests: cloudFront(distribution, 'Requests', 'Sum'), upstream },
        label: 'upstream 5xx (% of CloudFront requests)',
        period: ALARM_PERIOD,
      }),
      threshold: input.settings.upstreamErrorRateAlarmThresholdPercent,
      evaluationPeriods: 2,
    }),
  );
}
