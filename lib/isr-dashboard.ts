/**
 * One CloudWatch dashboard an on-call engineer opens first: what viewers get (requests by cache
 * status, passed through included, hit ratio, and CloudFront's own view, which also counts what
 * the edge routes to the upstream), what regeneration does (renders, latency, queue age, dead
 * letters, the CDN purges' queue beside the intents'), and the work the sweeper found stuck or failed. Metric names are the ones the
 * functions emit.
 */
import { Duration } from 'aws-cdk-lib';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import {
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  type IMetric,
  type IWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { SweeperMetric } from '../lambda/core/operate/sweep.js';
import {
  OriginMetricName,
  originMetric,
  serviceMetric,
  SWEEPER_SERVICE_DIMENSION,
  WORKER_SERVICE_DIMENSION,
} from './isr-metrics.js';

const PERIOD = Duration.minutes(5);

export interface DashboardInput {
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** The CDN purges' queue (soft and deadline purges) and its DLQ. */
  readonly purgeQueue: IQueue;
  readonly purgeDeadLetterQueue: IQueue;
  readonly distribution: IDistribution;
}

/** CloudFront publishes in us-east-1 whatever the stack's region; a widget may read there. */
const cloudFront = (distribution: IDistribution, metricName: string, statistic: string) =>
  new Metric({
    namespace: 'AWS/CloudFront',
    metricName,
    dimensionsMap: { DistributionId: distribution.distributionId, Region: 'Global' },
    region: 'us-east-1',
    statistic,
    period: PERIOD,
  });

const oldest = (queue: IQueue, label: string) =>
  queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum', label });
const depth = (queue: IQueue, label: string) =>
  queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label });

const graph = (title: string, left: IMetric[], unit?: string): GraphWidget =>
  new GraphWidget({ title, left, width: 8, height: 6, leftYAxis: { min: 0, label: unit } });

export function createIsrDashboard(scope: Construct, input: DashboardInput): Dashboard {
  const count = (name: OriginMetricName, label: string) => {
    const metric = originMetric(name, PERIOD);
    return metric.with({ label });
  };
  const worker = (name: string, statistic: string, label: string) =>
    serviceMetric(WORKER_SERVICE_DIMENSION, name, { period: PERIOD, statistic, label });
  const sweeper = (name: string, label: string) =>
    serviceMetric(SWEEPER_SERVICE_DIMENSION, name, { period: PERIOD, statistic: 'Maximum', label });

  const hits = count(OriginMetricName.Hits, 'HIT');
  const stale = count(OriginMetricName.Stale, 'STALE');
  const misses = count(OriginMetricName.Misses, 'MISS');
  const widgets: IWidget[] = [
    graph('Requests by cache status', [
      hits,
      stale,
      misses,
      count(OriginMetricName.PassThrough, 'PASS (passed through by the origin)'),
      count(OriginMetricName.HitForPass, 'of which hit-for-pass'),
      count(OriginMetricName.Unavailable, '5xx from the origin'),
    ]),
    graph(
      'Hit ratio (served from the cache, %)',
      [
        new MathExpression({
          // HIT and STALE are both served from the cache; a MISS is rendered in the request.
          expression:
            '100 * (FILL(hits, 0) + FILL(stale, 0)) / (FILL(hits, 0) + FILL(stale, 0) + FILL(misses, 0))',
          usingMetrics: { hits, stale, misses },
          label: 'Hit ratio',
          period: PERIOD,
        }),
      ],
      '%',
    ),
    graph(
      'Regeneration latency',
      [worker('RegenerationDuration', 'p50', 'p50'), worker('RegenerationDuration', 'p99', 'p99')],
      'ms',
    ),
    graph('Renders', [
      worker('Regenerations', 'Sum', 'Regenerations published'),
      misses.with({ label: 'Rendered in the request (MISS)' }),
      worker('RenderFailures', 'Sum', 'Render failures'),
    ]),
    graph(
      'Queue age (oldest message)',
      [
        oldest(input.queue, 'Regeneration queue (intents, fan-out steps)'),
        oldest(input.purgeQueue, 'Purge queue (CDN purges)'),
      ],
      's',
    ),
    graph('DLQ depth', [
      depth(input.deadLetterQueue, 'Regeneration DLQ'),
      depth(input.purgeDeadLetterQueue, 'Purge DLQ'),
    ]),
    graph('Stuck and failed work', [
      sweeper(SweeperMetric.MissingTasks, 'Missing tasks'),
      sweeper(SweeperMetric.FailedTasks, 'Failed tasks'),
      sweeper(SweeperMetric.AbandonedLeases, 'Abandoned leases'),
      sweeper(SweeperMetric.FailingPages, 'Failing pages'),
      sweeper(SweeperMetric.BrokenPages, 'Broken pages'),
      sweeper(SweeperMetric.StartedNotCompleted, 'Started, not completed'),
    ]),
    graph('CloudFront (every route, the upstream included)', [
      cloudFront(input.distribution, 'Requests', 'Sum').with({ label: 'Requests' }),
      cloudFront(input.distribution, '5xxErrorRate', 'Average').with({ label: '5xx rate (%)' }),
      cloudFront(input.distribution, '4xxErrorRate', 'Average').with({ label: '4xx rate (%)' }),
    ]),
    graph('Orphan bodies', [
      sweeper(SweeperMetric.OrphanBodiesRetired, 'Retired'),
      sweeper(SweeperMetric.BodiesListed, 'Listed'),
      sweeper(SweeperMetric.UnlistedVersionsDeleted, 'Unlisted versions deleted'),
    ]),
  ];
  const dashboard = new Dashboard(scope, 'Dashboard', { defaultInterval: Duration.hours(3) });
  for (let i = 0; i < widgets.length; i += 3) dashboard.addWidgets(...widgets.slice(i, i + 3));
  return dashboard;
}
