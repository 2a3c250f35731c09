/**
 * Settings only the construct reads (sizes, concurrency, retention, alarms): no function is told
 * them. Same rules as `lambda/core/settings/table.ts`: each entry's TSDoc documents the prop and
 * makes a row of docs/SETTINGS.md; `@default` is checked against the value. Kept out of the
 * Lambda bundles, which never read them.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ANY } from '../lambda/core/settings/index.js';

/** One deploy setting: its default and bounds (integers), or its own check. */
export interface DeploySetting<T> {
  readonly default: T | undefined;
  readonly min?: number;
  readonly max?: number;
  readonly why?: string;
  check?(value: T, name: string): string[];
}

const count = <D extends number | undefined>(
  fallback: D,
  min: number,
  max = ANY,
  why?: string,
): DeploySetting<number> & { readonly default: D } => ({ default: fallback, min, max, why });

const percent = (fallback: number): DeploySetting<number> => ({
  default: fallback,
  check: (value, name) =>
    value >= 0 && value <= 100 ? [] : [`${name} must be a percentage 0..100, got ${value}`],
});

const value = <T>(fallback: T): DeploySetting<T> & { readonly default: T } => ({
  default: fallback,
});

/** Lambda memory: 128 MB to 10 GB. */
const memory = () => count(1024, 128, 10_240);

export const DEPLOY_SETTINGS = {
  /**
   * Worker timeout; the queue's visibility timeout is six times this.
   * @default Duration.seconds(30)
   * @bounds 1 s..900 s, and room for a render and its publish
   */
  workerTimeout: value(Duration.seconds(30)),
  /**
   * Worker memory in MB (CPU scales with it).
   * @default 1_024
   */
  workerMemorySize: memory(),
  /**
   * Records per worker invocation (FIFO: at most 10); they are processed concurrently.
   * @default 10
   */
  workerBatchSize: count(10, 1, 10, 'a FIFO event source takes at most 10'),
  /**
   * Concurrent worker invocations the event source may run.
   * @default 10
   */
  workerMaxConcurrency: count(10, 2, 1000),
  /**
   * Concurrency reserved for the worker, so a flood of origin traffic can never take the slots
   * regenerations need; at least `workerMaxConcurrency`. `0` reserves nothing (use it where the
   * account's limit is low: Lambda keeps 10 unreserved, so a new 10-slot account cannot reserve).
   * @default - `workerMaxConcurrency`, exactly what its event source can use
   * @bounds at least `workerMaxConcurrency`
   */
  workerReservedConcurrency: count(undefined, 0, ANY, '0 reserves none'),
  /**
   * CDN purges the purger takes per invocation from the purge queue: one CloudFront invalidation
   * carries them all (split past 3,000 tags). Above 10, `purgeBatchWindow` must be at least 1 s.
   * @default 1_000
   */
  purgeBatchSize: count(1_000, 1, 10_000, 'an SQS event source takes at most 10,000'),
  /**
   * How long the purge queue's event source gathers purges before it invokes the purger: pages
   * published within it are purged in one invalidation. At most 300 s.
   * @default Duration.seconds(5)
   * @bounds 0 s..300 s; at least 1 s when `purgeBatchSize` is above 10
   */
  purgeBatchWindow: {
    ...value(Duration.seconds(5)),
    check: (window: Duration, name: string) =>
      window.toSeconds() <= 300
        ? []
        : [`${name} (${window.toSeconds()} s) must be at most 300 s (SQS event sources)`],
  },
  /**
   * Origin timeout; a miss renders in the request, so it must fit a render and its publish.
   * CloudFront waits as long, up to its default 60 s origin response quota.
   * @default Duration.seconds(30)
   * @bounds 1 s..900 s, and room for a render (or a wait) and its publish
   */
  originTimeout: value(Duration.seconds(30)),
  /**
   * Origin memory in MB (CPU scales with it).
   * @default 1_024
   */
  originMemorySize: memory(),
  /**
   * Concurrency reserved for (and capping) the origin: bounds its share of the account and the
   * render load a flood of misses puts on the upstream; throttles raise an alarm. `0` reserves
   * nothing and leaves the origin uncapped (for accounts whose limit is too low to reserve).
   * @default 100
   * @bounds above `missRenderLimit`
   */
  originReservedConcurrency: count(100, 0, ANY, '0 reserves none'),
  /**
   * Concurrency reserved for (and capping) the revalidate function. With
   * `revalidateWebhookSecret` its URL is open to anyone (each request is then refused by its
   * signature, but runs): the cap keeps a flood of such requests from taking the account's
   * concurrency from the origin and the worker. `0` reserves nothing and leaves it uncapped.
   * @default 10
   */
  revalidateReservedConcurrency: count(10, 0, ANY, '0 reserves none'),
  /**
   * Days a retired body (a version no longer kept, or an orphan) is kept after it was deleted,
   * as a noncurrent version of the versioned bucket, before the lifecycle rule expires it.
   * Counted from the delete, not from the body's creation.
   * @default 7
   */
  supersededBodyExpirationDays: count(7, 1),
  /**
   * What happens to the cache table, body bucket and log groups the service created when they
   * leave the stack. A non-empty bucket is never emptied for you (no auto-delete custom resource).
   * @default RemovalPolicy.RETAIN
   */
  removalPolicy: value(RemovalPolicy.RETAIN),
  /**
   * Retention of the functions' log groups.
   * @default RetentionDays.ONE_MONTH
   */
  logRetention: value(RetentionDays.ONE_MONTH),
  /**
   * Alarm when the oldest queued intent is older than this (at least 60 s).
   * @default Duration.seconds(300)
   * @bounds at least 60 s
   */
  queueAgeAlarmThreshold: {
    ...value(Duration.seconds(300)),
    check: (age: Duration, name: string) =>
      age.toSeconds() >= 60
        ? []
        : [`${name} (${age.toSeconds()} s) must be at least 60 s (SQS reports per minute)`],
  },
  /**
   * Alarm when more than this many new messages reach the DLQ in 5 minutes.
   * @default 0
   */
  deadLetterAlarmThreshold: count(0, 0),
  /**
   * Alarm when more than this many new purges reach the purge queue's DLQ in 5 minutes.
   * @default 0
   */
  purgeDeadLetterAlarmThreshold: count(0, 0),
  /**
   * Alarm when the worker fails more often than this in 5 minutes.
   * @default 0
   */
  workerErrorsAlarmThreshold: count(0, 0),
  /**
   * Alarm when the origin function fails (crash, timeout) more often than this in 5 minutes.
   * @default 0
   */
  originErrorsAlarmThreshold: count(0, 0),
  /**
   * Alarm when more than this percentage of page requests are misses, for 15 minutes.
   * @default 50
   * @bounds a percentage, 0..100
   */
  missRateAlarmThresholdPercent: percent(50),
  /**
   * Alarm when more than this percentage of page requests fail (5xx from the origin), for 10
   * minutes.
   * @default 5
   * @bounds a percentage, 0..100
   */
  renderFailureRateAlarmThresholdPercent: percent(5),
  /**
   * Alarm when CloudFront answers more than this percentage of requests with 5xx, for 10 minutes.
   * @default 5
   * @bounds a percentage, 0..100
   */
  cdnErrorRateAlarmThresholdPercent: percent(5),
  /**
   * Alarm when more than this percentage of CloudFront's requests get a 5xx the origin function
   * did not answer (the upstream's, for what the edge routes past the origin), for 10 minutes.
   * @default 1
   * @bounds a percentage, 0..100
   */
  upstreamErrorRateAlarmThresholdPercent: percent(1),
  /**
   * The version of `upstreamSecret` CloudFront sends the upstream. CloudFormation resolves the
   * secret only when the template changes: set this to the new version's id when rotating, so
   * the distribution picks it up (the functions read the current version themselves).
   * @default - the version current when the distribution was last updated
   * @bounds a Secrets Manager version id (32 to 64 letters, digits or `-`)
   */
  upstreamSecretVersionId: {
    default: undefined as string | undefined,
    check: (id: string, name: string) =>
      /^[A-Za-z0-9-]{32,64}$/.test(id) ? [] : [`${name} must be a Secrets Manager version id`],
  },
  /**
   * Requests one client IP may make in 5 minutes before WAF blocks it: creates a web ACL with
   * one rate-based rule. CloudFront web ACLs live in us-east-1, so the stack must be there.
   * @default - no web ACL (WAF bills per web ACL, rule and request)
   */
  rateLimitPerFiveMinutes: count(undefined, 10, 2_000_000_000),
};

type Deploy = typeof DEPLOY_SETTINGS;
export type DeployKey = keyof Deploy;
type DeployValue<K extends DeployKey> = Deploy[K] extends DeploySetting<infer T> ? T : never;

/** The construct props of the deploy settings, each documented by its entry (homomorphic). */
export type DeploySettingProps = { readonly [K in keyof Deploy]?: DeployValue<K> };

/** Each deploy setting with its default applied (undefined where it has none). */
export type DeployValues = {
  readonly [K in keyof Deploy]: Deploy[K]['default'] extends undefined
    ? DeployValue<K> | undefined
    : DeployValue<K>;
};
