/**
 * `IsrServiceProps` resolved and checked at synth. What the functions read comes from the one
 * settings table (`lambda/core/settings/table.ts`): the props are written into the environment
 * each function gets, and that environment is checked with the reader its cold start runs, so
 * synth refuses exactly what a cold start would, in the same words (props named for variables).
 * Only values known at deploy (CDK tokens) are left to the cold start. Deploy-only settings
 * (`isr-deploy-settings.ts`) and the rules of the deployment itself come on top.
 */
import { Duration, Lazy, Token } from 'aws-cdk-lib';
import {
  environmentOf,
  FUNCTION_KINDS,
  readSettings,
  SETTINGS,
  TABLE,
  valueProblems,
  writeSettings,
  type FunctionKind,
  type Reader,
  type SettingValues,
} from '../lambda/core/settings/index.js';
import { tenantOriginsByHost } from '../lambda/core/tenant-origins.js';
import { DEPLOY_SETTINGS, type DeployValues } from './isr-deploy-settings.js';
import { edgeProblems, resourceProblems } from './isr-prop-rules.js';
import { quotaProblems, type ReservationKey } from './isr-quota.js';
import type { IsrServiceProps } from './isr-service-props.js';

/** Visibility timeout per unit of worker timeout, as AWS advises for SQS event sources. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
/** FIFO event sources take at most 10 records per batch. */
export const MAX_FIFO_BATCH_SIZE = 10;
/** AWS advises a redrive of at least 5 receives, so a throttled batch is not dead-lettered. */
export const MIN_REDRIVE_RECEIVES = 5;
/** A sweep reads a bounded amount (see core/sweep.ts); two minutes leave it ample room. */
export const SWEEPER_TIMEOUT = Duration.minutes(2);
/** A tag of 10,000 pages is marked 32 at a time in a few seconds; a minute leaves room. */
export const REVALIDATE_TIMEOUT = Duration.seconds(60);
/**
 * The purger's one CloudFront call backs off for up to 20 s while CloudFront throttles
 * (`DEFAULT_PURGE_BACKOFF`) before the purge is kept as pending: a minute leaves room.
 */
export const PURGER_TIMEOUT = Duration.seconds(60);

/** The settings of the functions, without the resources the construct creates for them. */
type FunctionValues = Omit<
  SettingValues,
  | 'tableName'
  | 'bodyBucket'
  | 'queueUrl'
  | 'dlqUrl'
  | 'purgeQueueUrl'
  | 'purgeDlqUrl'
  | 'cdnDistributionId'
  | 'functionTimeoutMs'
>;

/** Props with every default applied and every rule checked. */
export interface IsrSettings extends FunctionValues, Omit<DeployValues, ReservationKey> {
  /** Undefined when nothing is reserved (the default; `0` too). */
  readonly workerReservedConcurrency: number | undefined;
  /** Undefined when nothing is reserved (the default; `0` too). */
  readonly originReservedConcurrency: number | undefined;
  /** Undefined when nothing is reserved (the default; `0` too). */
  readonly revalidateReservedConcurrency: number | undefined;
  /** Undefined when nothing is reserved (the default; `0` too). */
  readonly sweeperReservedConcurrency: number | undefined;
  /** The upstream's shared secret: which secret (ARN), sent in which header. */
  readonly upstreamSecret: { readonly arn: string; readonly header: string } | undefined;
  /** The webhook HMAC key's ARN: HMAC mode when set. */
  readonly revalidateWebhookSecretArn: string | undefined;
  readonly revalidateTimeout: Duration;
  readonly revalidateMemorySize: number;
  /** Each setting the construct sets, as its environment variable's text. */
  readonly environment: Readonly<Record<string, string>>;
}

/** A prop combination the service cannot run with; thrown while the construct is built. */
export class IsrServiceConfigError extends Error {
  override readonly name = 'IsrServiceConfigError';
}

/** The table's inputs from the props: its props as given, and the values refs stand for. */
function settingInputs(props: IsrServiceProps): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(SETTINGS)) {
    if (spec.source === 'prop') inputs[key] = (props as Record<string, unknown>)[key];
  }
  const byHost = props.tenantsByHost === undefined ? undefined : Object.values(props.tenantsByHost);
  inputs.tenants = props.tenants ?? byHost;
  // Multi-tenant renders and passes name each tenant's host: its first in the table by default.
  inputs.tenantOrigins =
    props.tenantOrigins ??
    (props.tenantsByHost === undefined || props.tenantHeader === undefined
      ? undefined
      : tenantOriginsByHost(props.tenantsByHost));
  inputs.upstreamSecretArn = props.upstreamSecret?.secretArn;
  inputs.revalidateSecretArn = props.revalidateWebhookSecret?.secretArn;
  return inputs;
}

/** Props with defaults applied and nothing checked yet. */
export function applyDefaults(props: IsrServiceProps): IsrSettings {
  const environment = writeSettings(TABLE, settingInputs(props));
  const values = readSettings(TABLE, undefined, environment, {
    nameOf: (key) => key,
    isDeployTime: (text) => Token.isUnresolved(text),
  }).values as SettingValues;
  const deploy = Object.fromEntries(
    Object.entries(DEPLOY_SETTINGS).map(([key, spec]) => [
      key,
      (props as Record<string, unknown>)[key] ?? spec.default,
    ]),
  ) as DeployValues;
  // Reservations are opt-in: unset or 0 reserves nothing.
  const reserved = (value: number | undefined) => (value === 0 ? undefined : value);
  return {
    ...values,
    ...deploy,
    workerReservedConcurrency: reserved(deploy.workerReservedConcurrency),
    originReservedConcurrency: reserved(deploy.originReservedConcurrency),
    revalidateReservedConcurrency: reserved(deploy.revalidateReservedConcurrency),
    sweeperReservedConcurrency: reserved(deploy.sweeperReservedConcurrency),
    upstreamSecret:
      values.upstreamSecretArn === undefined
        ? undefined
        : { arn: values.upstreamSecretArn, header: values.upstreamSecretHeader },
    revalidateWebhookSecretArn: values.revalidateSecretArn,
    revalidateTimeout: REVALIDATE_TIMEOUT,
    revalidateMemorySize: 512,
    environment,
  };
}

export function resolveSettings(props: IsrServiceProps): IsrSettings {
  const settings = applyDefaults(props);
  const problems = [...lambdaProblems(settings), ...deployProblems(settings, props)];
  if (problems.length > 0) throw new IsrServiceConfigError(`IsrService: ${problems.join('; ')}`);
  return settings;
}

/** Each function's timeout. */
export function functionTimeout(kind: FunctionKind, settings: IsrSettings): Duration {
  if (kind === 'origin') return settings.originTimeout;
  if (kind === 'worker') return settings.workerTimeout;
  if (kind === 'purger') return PURGER_TIMEOUT;
  return kind === 'sweeper' ? SWEEPER_TIMEOUT : settings.revalidateTimeout;
}

/** The resources a function is told about, by name or URL (CloudFormation references at synth). */
export interface FunctionRefs {
  readonly tableName: string;
  readonly bucketName: string;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  readonly purgeQueueUrl: string;
  readonly purgeDeadLetterQueueUrl: string;
}

/**
 * The settings part of what `kind` reads, named as its cold start reads them: the props'
 * settings, the resources, and its own timeout. The upstream secret goes to the functions that
 * call the upstream only, as its ARN: each function gets exactly the settings it reads.
 */
export function settingsEnvironment(
  kind: FunctionKind,
  settings: IsrSettings,
  refs: FunctionRefs,
): Record<string, string> {
  const texts = {
    ...settings.environment,
    [SETTINGS.tableName.env]: refs.tableName,
    [SETTINGS.bodyBucket.env]: refs.bucketName,
    [SETTINGS.queueUrl.env]: refs.queueUrl,
    [SETTINGS.dlqUrl.env]: refs.deadLetterQueueUrl,
    [SETTINGS.purgeQueueUrl.env]: refs.purgeQueueUrl,
    [SETTINGS.purgeDlqUrl.env]: refs.purgeDeadLetterQueueUrl,
    [SETTINGS.functionTimeoutMs.env]: String(functionTimeout(kind, settings).toMilliseconds()),
  };
  return environmentOf(TABLE, kind, texts);
}

/** Resources the construct has not created yet: known at deploy, never judged at synth. */
const DEPLOY_TIME_REFS: FunctionRefs = {
  tableName: Lazy.string({ produce: () => 'table' }),
  bucketName: Lazy.string({ produce: () => 'bucket' }),
  queueUrl: Lazy.string({ produce: () => 'queue' }),
  deadLetterQueueUrl: Lazy.string({ produce: () => 'dlq' }),
  purgeQueueUrl: Lazy.string({ produce: () => 'purge-queue' }),
  purgeDeadLetterQueueUrl: Lazy.string({ produce: () => 'purge-dlq' }),
};

/** A setting as the construct's user knows it: its prop, or the name of what sets it. */
export const propNameOf =
  (reader: Reader) =>
  (key: string): string => {
    const spec = (SETTINGS as Record<string, { source: string; prop?: string }>)[key];
    if (spec === undefined || spec.source === 'prop') return key;
    return spec.prop?.replace('<function>', reader) ?? key;
  };

/**
 * The problems each function's cold start would find in the environment the construct gives it
 * (and the construct's own reading of the settings it uses), named by prop, each once.
 */
export function lambdaProblems(settings: IsrSettings): string[] {
  const isDeployTime = (text: string) => Token.isUnresolved(text);
  const problems = FUNCTION_KINDS.flatMap(
    (kind) =>
      readSettings(TABLE, kind, settingsEnvironment(kind, settings, DEPLOY_TIME_REFS), {
        nameOf: propNameOf(kind),
        isDeployTime,
      }).problems,
  );
  const deploy = readSettings(
    TABLE,
    'deploy',
    environmentOf(TABLE, 'deploy', settings.environment),
    {
      nameOf: propNameOf('deploy'),
      isDeployTime,
    },
  );
  return [...new Set([...problems, ...deploy.problems])];
}

/** Lambda allows 4 KB of environment per function, names and values together. */
const ENVIRONMENT_LIMIT_BYTES = 4096;
/** Kept for what is added beside the settings: the secrets extension, the CDN, Powertools, Node. */
const ENVIRONMENT_RESERVE_BYTES = 640;
/** A value known only at deploy (a resource's name or URL, an ARN), as its likely length. */
const DEPLOY_TIME_VALUE_BYTES = 160;

/** Settings that would not fit a function's environment: the deploy would fail, so synth does. */
function environmentProblems(settings: IsrSettings): string[] {
  return FUNCTION_KINDS.flatMap((kind) => {
    const env = settingsEnvironment(kind, settings, DEPLOY_TIME_REFS);
    const sizes = Object.entries(env).map(([name, text]) => {
      const value = Token.isUnresolved(text) ? DEPLOY_TIME_VALUE_BYTES : Buffer.byteLength(text);
      return [name, Buffer.byteLength(name) + value] as const;
    });
    const bytes = sizes.reduce((sum, [, size]) => sum + size, 0);
    if (bytes + ENVIRONMENT_RESERVE_BYTES <= ENVIRONMENT_LIMIT_BYTES) return [];
    const largest = [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 3);
    return [
      `the ${kind} function's settings take about ${bytes} bytes of environment, over the ` +
        `${ENVIRONMENT_LIMIT_BYTES - ENVIRONMENT_RESERVE_BYTES} Lambda leaves them ` +
        `(4 KB in all): the largest are ${largest.map(([name, size]) => `${name} (${size})`).join(', ')}`,
    ];
  });
}

/** Rules of the deployment itself: what CloudFront, SQS, Lambda and WAF accept. */
function deployProblems(settings: IsrSettings, props: IsrServiceProps): string[] {
  const s = settings;
  const problems = Object.entries(DEPLOY_SETTINGS).flatMap(([key, spec]) => {
    const value = (props as Record<string, unknown>)[key] ?? spec.default;
    return value === undefined ? [] : valueProblems(spec, value, key);
  });
  problems.push(...environmentProblems(s), ...edgeProblems(s, props));
  if (s.maxReceiveCount < MIN_REDRIVE_RECEIVES && Number.isInteger(s.maxReceiveCount)) {
    problems.push(
      `maxReceiveCount must be an integer ${MIN_REDRIVE_RECEIVES}..1000 (AWS advises 5 at least), ` +
        `got ${s.maxReceiveCount}`,
    );
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
  if (s.purgeBatchSize > 10 && s.purgeBatchWindow.toSeconds() < 1) {
    problems.push(
      `purgeBatchWindow must be at least 1 s when purgeBatchSize (${s.purgeBatchSize}) is above ` +
        '10: SQS event sources batch past 10 records only within a batching window',
    );
  }
  const reserved = s.workerReservedConcurrency;
  if (reserved !== undefined && reserved < s.workerMaxConcurrency) {
    problems.push(
      `workerReservedConcurrency (${reserved}) must be at least workerMaxConcurrency ` +
        `(${s.workerMaxConcurrency}), or 0 to reserve none: its event source would be throttled`,
    );
  }
  problems.push(...quotaProblems(s), ...resourceProblems(props));
  return problems;
}
