/**
 * Defaults and synth-time checks of `IsrServiceProps`. What the Lambdas read is checked with
 * `lambda/core/settings.ts`, the module their cold start applies too, so synth refuses exactly
 * the settings a cold start would; only values known at deploy (CDK tokens) are left to the cold
 * start. Deploy-only rules come on top: memory, batching, concurrency, the redrive minimum of 5
 * receives (the worker alone accepts fewer), alarms and the edge.
 */
import { Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  normaliseHeaderName,
  SETTING_DEFAULTS as D,
  settingsProblems,
  type NameOf,
  type ServiceSettings,
} from '../lambda/core/settings.js';
import { tenantTableProblems } from './edge/tenant-function.js';
import type { IsrServiceProps } from './isr-service-props.js';

/** Visibility timeout per unit of worker timeout, as AWS advises for SQS event sources. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
/** FIFO event sources take at most 10 records per batch. */
export const MAX_FIFO_BATCH_SIZE = 10;
/** AWS advises a redrive of at least 5 receives, so a throttled batch is not dead-lettered. */
export const MIN_REDRIVE_RECEIVES = 5;
/** Default reservation of the origin: see `originReservedConcurrency`. */
export const DEFAULT_ORIGIN_RESERVED_CONCURRENCY = 100;
/** WAF rate-based rules count between 10 and 2e9 requests per window. */
const RATE_LIMIT_RANGE = [10, 2_000_000_000] as const;

/** A sweep reads a bounded amount (see core/sweep.ts); two minutes leave it ample room. */
export const SWEEPER_TIMEOUT = Duration.minutes(2);

/** Props with every default applied and every rule checked. */
export interface IsrSettings extends ServiceSettings {
  readonly workerTimeout: Duration;
  readonly workerMemorySize: number;
  readonly workerBatchSize: number;
  readonly workerMaxConcurrency: number;
  /** Undefined when nothing is reserved. */
  readonly workerReservedConcurrency: number | undefined;
  readonly originTimeout: Duration;
  readonly originMemorySize: number;
  /** Undefined when nothing is reserved. */
  readonly originReservedConcurrency: number | undefined;
  readonly maxReceiveCount: number;
  readonly supersededBodyExpirationDays: number;
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: RetentionDays;
  readonly queueAgeAlarmThreshold: Duration;
  readonly deadLetterAlarmThreshold: number;
  readonly workerErrorsAlarmThreshold: number;
  readonly originErrorsAlarmThreshold: number;
  readonly missRateAlarmThresholdPercent: number;
  readonly renderFailureRateAlarmThresholdPercent: number;
  readonly cdnErrorRateAlarmThresholdPercent: number;
  readonly rateLimitPerFiveMinutes: number | undefined;
  readonly missRenderLimit: number;
  readonly overloadFallbackPath: string | undefined;
  readonly orphanAgeSeconds: number;
  readonly sweepPageLimit: number;
  readonly orphanListLimit: number;
  readonly revalidateTimeout: Duration;
  readonly revalidateMemorySize: number;
  /** The webhook HMAC key's ARN: HMAC mode when set. */
  readonly revalidateWebhookSecretArn: string | undefined;
}

/** A prop combination the service cannot run with; thrown while the construct is built. */
export class IsrServiceConfigError extends Error {
  override readonly name = 'IsrServiceConfigError';
}

/** Props with defaults applied and nothing checked yet (the property test feeds this to both sides). */
export function applyDefaults(props: IsrServiceProps): IsrSettings {
  const workerMaxConcurrency = props.workerMaxConcurrency ?? 10;
  const reserved = (value: number | undefined, fallback: number) =>
    value === 0 ? undefined : (value ?? fallback);
  return {
    renderOriginUrl: props.renderOriginUrl,
    allowedQueryParams: [...new Set(props.allowedQueryParams ?? [])].sort(),
    tenantHeader:
      props.tenantHeader === undefined ? undefined : normaliseHeaderName(props.tenantHeader),
    tenants:
      props.tenants === undefined
        ? props.tenantsByHost === undefined
          ? undefined
          : [...new Set(Object.values(props.tenantsByHost))].sort()
        : [...new Set(props.tenants)],
    deployId: props.deployId ?? D.deployId,
    revalidateSeconds: props.revalidateSeconds ?? D.revalidateSeconds,
    leaseSeconds: props.leaseSeconds ?? D.leaseSeconds,
    clockSkewMarginSeconds: props.clockSkewMarginSeconds ?? D.clockSkewMarginSeconds,
    renderTimeoutMs: props.renderTimeoutMs ?? D.renderTimeoutMs,
    maxBodyBytes: props.maxBodyBytes ?? D.maxBodyBytes,
    metaTtlSeconds: props.metaTtlSeconds ?? D.metaTtlSeconds,
    goneTtlSeconds: props.goneTtlSeconds ?? D.goneTtlSeconds,
    keepVersions: props.keepVersions ?? D.keepVersions,
    renderPaths: [...(props.renderPaths ?? [])],
    keptHeaders: (props.keptHeaders ?? D.keptHeaders).map((header) => header.toLowerCase()),
    setCookie: props.setCookie ?? D.setCookie,
    bodyKeyPrefix: props.bodyKeyPrefix ?? D.bodyKeyPrefix,
    cacheTagHeader: normaliseHeaderName(props.cacheTagHeader ?? D.cacheTagHeader),
    upstreamTagHeader: normaliseHeaderName(props.upstreamTagHeader ?? D.upstreamTagHeader),
    missRenderLimit: props.missRenderLimit ?? D.missRenderLimit,
    overloadFallbackPath: props.overloadFallbackPath,
    upstreamSecret:
      props.upstreamSecret === undefined
        ? undefined
        : {
            arn: props.upstreamSecret.secretArn,
            header: normaliseHeaderName(props.upstreamSecretHeader ?? D.upstreamSecretHeader),
          },
    workerTimeout: props.workerTimeout ?? Duration.millis(D.functionTimeoutMs),
    workerMemorySize: props.workerMemorySize ?? 1024,
    workerBatchSize: props.workerBatchSize ?? 10,
    workerMaxConcurrency,
    workerReservedConcurrency: reserved(props.workerReservedConcurrency, workerMaxConcurrency),
    originTimeout: props.originTimeout ?? Duration.millis(D.functionTimeoutMs),
    originMemorySize: props.originMemorySize ?? 1024,
    originReservedConcurrency: reserved(
      props.originReservedConcurrency,
      DEFAULT_ORIGIN_RESERVED_CONCURRENCY,
    ),
    maxReceiveCount: props.maxReceiveCount ?? D.maxReceiveCount,
    supersededBodyExpirationDays: props.supersededBodyExpirationDays ?? 7,
    removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
    queueAgeAlarmThreshold: props.queueAgeAlarmThreshold ?? Duration.seconds(300),
    deadLetterAlarmThreshold: props.deadLetterAlarmThreshold ?? 0,
    workerErrorsAlarmThreshold: props.workerErrorsAlarmThreshold ?? 0,
    originErrorsAlarmThreshold: props.originErrorsAlarmThreshold ?? 0,
    missRateAlarmThresholdPercent: props.missRateAlarmThresholdPercent ?? 50,
    renderFailureRateAlarmThresholdPercent: props.renderFailureRateAlarmThresholdPercent ?? 5,
    cdnErrorRateAlarmThresholdPercent: props.cdnErrorRateAlarmThresholdPercent ?? 5,
    rateLimitPerFiveMinutes: props.rateLimitPerFiveMinutes,
    orphanAgeSeconds: props.orphanAgeSeconds ?? D.orphanAgeSeconds,
    sweepPageLimit: D.sweepPageLimit,
    orphanListLimit: D.orphanListLimit,
    // A tag of 10,000 pages is marked 32 at a time in a few seconds; a minute leaves room.
    revalidateTimeout: Duration.seconds(60),
    revalidateMemorySize: 512,
    revalidateWebhookSecretArn: props.revalidateWebhookSecret?.secretArn,
  };
}

export function resolveSettings(props: IsrServiceProps): IsrSettings {
  const settings = applyDefaults(props);
  const problems = [...lambdaProblems(settings), ...deployProblems(settings, props)];
  if (problems.length > 0) throw new IsrServiceConfigError(`IsrService: ${problems.join('; ')}`);
  return settings;
}

/** Construct prop names for the settings the shared rules check. */
const propName: NameOf = (key, kind) => {
  if (key === 'functionTimeoutMs') return `${kind ?? 'worker'}Timeout`;
  if (key === 'upstreamSecretArn' || key === 'upstreamSecret') return 'upstreamSecret';
  if (key === 'localMode') return 'local mode';
  return key;
};

/** The rules every cold start applies (`lambda/shared/config.ts`), applied to the same values. */
export function lambdaProblems(settings: IsrSettings): string[] {
  return settingsProblems(
    {
      service: settings,
      localMode: false,
      isDeployTime: (text) => Token.isUnresolved(text),
      functions: [
        {
          kind: 'origin',
          timeoutMs: settings.originTimeout.toMilliseconds(),
          settings: {
            dedupeWindowSeconds: D.dedupeWindowSeconds,
            missRenderLimit: settings.missRenderLimit,
            missWaitMs: D.missWaitMs,
            retryAfterSeconds: D.retryAfterSeconds,
            staleSharedMaxAge: D.staleSharedMaxAge,
            staleWhileRevalidateSeconds: D.staleWhileRevalidateSeconds,
            staleIfErrorSeconds: D.staleIfErrorSeconds,
          },
        },
        {
          kind: 'worker',
          timeoutMs: settings.workerTimeout.toMilliseconds(),
          settings: {
            maxReceiveCount: settings.maxReceiveCount,
            idempotencyTtlSeconds: D.idempotencyTtlSeconds,
          },
        },
        {
          kind: 'sweeper',
          timeoutMs: SWEEPER_TIMEOUT.toMilliseconds(),
          settings: {
            orphanAgeSeconds: settings.orphanAgeSeconds,
            sweepPageLimit: settings.sweepPageLimit,
            orphanListLimit: settings.orphanListLimit,
          },
        },
        {
          kind: 'revalidate',
          timeoutMs: settings.revalidateTimeout.toMilliseconds(),
          settings: {
            revalidateMaxPaths: D.revalidateMaxPaths,
            revalidateMaxTags: D.revalidateMaxTags,
            revalidateSkewSeconds: D.revalidateSkewSeconds,
            revalidateKeyTtlSeconds: D.revalidateKeyTtlSeconds,
          },
        },
      ],
    },
    propName,
  );
}

/** Rules of the deployment itself: what CloudFront, SQS, Lambda and WAF accept. */
function deployProblems(settings: IsrSettings, props: IsrServiceProps): string[] {
  const problems: string[] = [];
  const integer = (name: string, value: number | undefined, min: number, max = Infinity) => {
    if (value === undefined || (Number.isInteger(value) && value >= min && value <= max)) return;
    const range = max === Infinity ? `>= ${min}` : `${min}..${max}`;
    problems.push(`${name} must be an integer ${range}, got ${value}`);
  };
  const s = settings;
  if (props.tenantsByHost !== undefined) {
    if (s.tenantHeader === undefined) problems.push('tenantsByHost needs tenantHeader');
    else {
      problems.push(
        ...tenantTableProblems({
          tenantHeader: s.tenantHeader,
          tenantsByHost: props.tenantsByHost,
        }),
      );
      const unserved = Object.values(props.tenantsByHost).filter(
        (tenant) => !(s.tenants ?? []).includes(tenant),
      );
      if (unserved.length > 0) {
        problems.push(`tenantsByHost names tenants outside tenants: ${unserved.join(', ')}`);
      }
    }
  }
  if (
    s.originReservedConcurrency !== undefined &&
    s.missRenderLimit >= s.originReservedConcurrency
  ) {
    problems.push(
      `missRenderLimit (${s.missRenderLimit}) must be below originReservedConcurrency ` +
        `(${s.originReservedConcurrency}), so cached pages are still served while misses render`,
    );
  }
  integer('workerMemorySize', s.workerMemorySize, 128, 10_240);
  integer('originMemorySize', s.originMemorySize, 128, 10_240);
  integer('workerBatchSize', s.workerBatchSize, 1, MAX_FIFO_BATCH_SIZE);
  integer('workerMaxConcurrency', s.workerMaxConcurrency, 2, 1000);
  integer('maxReceiveCount', s.maxReceiveCount, MIN_REDRIVE_RECEIVES, 1000);
  integer('supersededBodyExpirationDays', s.supersededBodyExpirationDays, 1);
  integer('deadLetterAlarmThreshold', s.deadLetterAlarmThreshold, 0);
  integer('workerErrorsAlarmThreshold', s.workerErrorsAlarmThreshold, 0);
  integer('originErrorsAlarmThreshold', s.originErrorsAlarmThreshold, 0);
  integer('workerReservedConcurrency', s.workerReservedConcurrency, 1);
  integer('originReservedConcurrency', s.originReservedConcurrency, 1);
  integer('rateLimitPerFiveMinutes', s.rateLimitPerFiveMinutes, ...RATE_LIMIT_RANGE);
  for (const [name, value] of [
    ['missRateAlarmThresholdPercent', s.missRateAlarmThresholdPercent],
    ['renderFailureRateAlarmThresholdPercent', s.renderFailureRateAlarmThresholdPercent],
    ['cdnErrorRateAlarmThresholdPercent', s.cdnErrorRateAlarmThresholdPercent],
  ] as const) {
    if (!(value >= 0 && value <= 100))
      problems.push(`${name} must be a percentage 0..100, got ${value}`);
  }
  const reserved = s.workerReservedConcurrency;
  if (reserved !== undefined && reserved < s.workerMaxConcurrency) {
    problems.push(
      `workerReservedConcurrency (${reserved}) must be at least workerMaxConcurrency ` +
        `(${s.workerMaxConcurrency}), or 0 to reserve none: its event source would be throttled`,
    );
  }
  const queueAge = s.queueAgeAlarmThreshold.toSeconds();
  if (queueAge < 60) {
    problems.push(
      `queueAgeAlarmThreshold (${queueAge} s) must be at least 60 s (SQS reports per minute)`,
    );
  }
  if (props.webAclId !== undefined && props.rateLimitPerFiveMinutes !== undefined) {
    problems.push(
      'rateLimitPerFiveMinutes creates a web ACL; it cannot be combined with webAclId (add a rate-based rule to that web ACL instead)',
    );
  }
  if (
    props.cdnLogs !== undefined &&
    (props.cdnLogs.logGroup === undefined) === (props.cdnLogs.bucket === undefined)
  ) {
    problems.push('cdnLogs needs exactly one of logGroup or bucket');
  }
  if (
    props.vpc === undefined &&
    (props.vpcSubnets !== undefined || props.securityGroups !== undefined)
  ) {
    problems.push('vpcSubnets and securityGroups need vpc');
  }
  if (props.upstreamSecretHeader !== undefined && props.upstreamSecret === undefined) {
    problems.push('upstreamSecretHeader needs upstreamSecret');
  }
  if (props.upstreamSecret !== undefined && props.upstreamSecret.secretFullArn === undefined) {
    problems.push(
      'upstreamSecret needs a complete ARN (a Secret of this app, or Secret.fromSecretCompleteArn), so the grant names exactly one secret',
    );
  }
  if (
    props.revalidateWebhookSecret !== undefined &&
    props.revalidateWebhookSecret.secretFullArn === undefined
  ) {
    problems.push(
      'revalidateWebhookSecret needs a complete ARN (a Secret of this app, or Secret.fromSecretCompleteArn), so the grant names exactly one secret',
    );
  }
  return problems;
}
