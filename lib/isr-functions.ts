/**
 * The Lambda functions (origin, worker, revalidate, sweeper): each runs its prebuilt bundle
 * (one ESM file, see isr-function-code.ts), configured through the environment
 * `lambda/shared/config.ts` validates at cold start.
 */
import { Duration } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Function as LambdaFunction,
  ParamsAndSecretsLayerVersion,
  ParamsAndSecretsLogLevel,
  ParamsAndSecretsVersions,
  Runtime,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { FunctionKind } from '../lambda/core/settings.js';
import { BUNDLE_HANDLER, functionCode } from './isr-function-code.js';
import { SWEEPER_TIMEOUT, type IsrSettings } from './isr-settings.js';

export type { FunctionKind };

/** Construct id of each function (and the prefix of its log group's). */
export const FUNCTION_IDS: Readonly<Record<FunctionKind, string>> = {
  origin: 'Origin',
  worker: 'Worker',
  revalidate: 'Revalidate',
  sweeper: 'Sweeper',
};

/** The resources a function is told about, by name or URL (CloudFormation references at synth). */
export interface FunctionRefs {
  readonly tableName: string;
  readonly bucketName: string;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
}

/** Where both functions run when they must reach a private upstream. */
export interface FunctionNetwork {
  readonly vpc?: IVpc | undefined;
  readonly vpcSubnets?: SubnetSelection | undefined;
  readonly securityGroups?: ISecurityGroup[] | undefined;
}

export interface ServiceFunctionOptions {
  readonly role: IRole;
  readonly settings: IsrSettings;
  readonly refs: FunctionRefs;
  readonly network: FunctionNetwork;
}

/**
 * A function with its own log group, writable by its role only, and the concurrency reserved
 * for it (see `originReservedConcurrency` / `workerReservedConcurrency`).
 */
export function createServiceFunction(
  scope: Construct,
  kind: FunctionKind,
  options: ServiceFunctionOptions,
): LambdaFunction {
  const id = FUNCTION_IDS[kind];
  const { settings, role, network } = options;
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: settings.logRetention,
    removalPolicy: settings.removalPolicy,
  });
  logGroup.grantWrite(role);
  const own = functionSettings(kind, settings);
  return new LambdaFunction(scope, id, {
    code: functionCode(kind),
    handler: BUNDLE_HANDLER,
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    timeout: own.timeout,
    memorySize: own.memorySize,
    reservedConcurrentExecutions: own.reservedConcurrency,
    role,
    logGroup,
    vpc: network.vpc,
    vpcSubnets: network.vpcSubnets,
    securityGroups: network.securityGroups,
    environment: functionEnvironment(kind, settings, options.refs),
    paramsAndSecrets: readsSecret(kind, settings) ? secretsExtension() : undefined,
  });
}

/**
 * The AWS Parameters and Secrets extension: the functions read the upstream secret from its
 * localhost cache instead of bundling a Secrets Manager client (14 KB and its init time). It
 * refreshes the value from Secrets Manager every five minutes, so a rotation reaches the
 * functions within that (plus a minute of in-process reuse).
 */
const secretsExtension = () =>
  ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103, {
    cacheEnabled: true,
    cacheSize: 10,
    secretsManagerTtl: Duration.minutes(5),
    logLevel: ParamsAndSecretsLogLevel.WARN,
  });

/** The origin and worker read the upstream secret; the revalidate function its webhook key. */
const readsSecret = (kind: FunctionKind, settings: IsrSettings): boolean => {
  if (kind === 'sweeper') return false; // it never calls the upstream
  return kind === 'revalidate'
    ? settings.revalidateWebhookSecretArn !== undefined
    : settings.upstreamSecret !== undefined;
};

/**
 * The sweeper runs alone (one reserved instance): a run that outlived the 5-minute schedule
 * never overlaps the next, which would list the same page of bodies twice.
 */
const SWEEPER_FUNCTION = { timeout: SWEEPER_TIMEOUT, memorySize: 256, reservedConcurrency: 1 };

function functionSettings(kind: FunctionKind, settings: IsrSettings) {
  switch (kind) {
    case 'origin':
      return {
        timeout: settings.originTimeout,
        memorySize: settings.originMemorySize,
        reservedConcurrency: settings.originReservedConcurrency,
      };
    case 'worker':
      return {
        timeout: settings.workerTimeout,
        memorySize: settings.workerMemorySize,
        reservedConcurrency: settings.workerReservedConcurrency,
      };
    case 'sweeper':
      return SWEEPER_FUNCTION;
    case 'revalidate':
      return {
        timeout: settings.revalidateTimeout,
        memorySize: settings.revalidateMemorySize,
        reservedConcurrency: undefined,
      };
  }
}

/** What only one function reads. */
function ownEnvironment(
  kind: FunctionKind,
  settings: IsrSettings,
  refs: FunctionRefs,
): Record<string, string> {
  switch (kind) {
    case 'origin':
      return {
        ISR_QUEUE_URL: refs.queueUrl,
        ISR_MISS_RENDER_LIMIT: String(settings.missRenderLimit),
        ...(settings.overloadFallbackPath === undefined
          ? {}
          : { ISR_OVERLOAD_FALLBACK_PATH: settings.overloadFallbackPath }),
      };
    case 'worker':
      return {
        ISR_DLQ_URL: refs.deadLetterQueueUrl,
        ISR_MAX_RECEIVE_COUNT: String(settings.maxReceiveCount),
      };
    case 'sweeper':
      return {
        ISR_ORPHAN_AGE_SECONDS: String(settings.orphanAgeSeconds),
        ISR_SWEEP_PAGE_LIMIT: String(settings.sweepPageLimit),
        ISR_ORPHAN_LIST_LIMIT: String(settings.orphanListLimit),
      };
    case 'revalidate':
      return {
        ISR_QUEUE_URL: refs.queueUrl,
        ...(settings.revalidateWebhookSecretArn === undefined
          ? {}
          : { ISR_REVALIDATE_SECRET_ARN: settings.revalidateWebhookSecretArn }),
      };
  }
}

/**
 * Everything a function reads, named exactly as `lambda/shared/config.ts` reads it. Pure, so
 * a test can feed the same settings to synth and to the cold-start config and compare verdicts.
 * The upstream secret travels as its ARN only; the function fetches the value itself.
 */
export function functionEnvironment(
  kind: FunctionKind,
  settings: IsrSettings,
  refs: FunctionRefs,
): Record<string, string> {
  const optional = (name: string, value: string | undefined) =>
    value === undefined ? {} : { [name]: value };
  // Only the origin and the worker call the upstream: no other function is told its secret.
  const upstreamSecret =
    kind === 'origin' || kind === 'worker' ? settings.upstreamSecret : undefined;
  return {
    FACETHEORY_CACHE_TABLE_NAME: refs.tableName,
    ISR_BODY_BUCKET: refs.bucketName,
    ISR_ALLOWED_QUERY_PARAMS: settings.allowedQueryParams.join(','),
    ...optional('ISR_RENDER_PATHS', settings.renderPaths.join(',') || undefined),
    ISR_KEPT_HEADERS: settings.keptHeaders.join(','),
    ISR_SET_COOKIE: settings.setCookie,
    ISR_BODY_PREFIX: settings.bodyKeyPrefix,
    ISR_CACHE_TAG_HEADER: settings.cacheTagHeader,
    ISR_UPSTREAM_TAG_HEADER: settings.upstreamTagHeader,
    ...optional('ISR_TENANT_HEADER', settings.tenantHeader),
    ...optional('ISR_TENANTS', settings.tenants?.join(',')),
    ISR_DEPLOY_ID: settings.deployId,
    ISR_LEASE_SECONDS: String(settings.leaseSeconds),
    ISR_CLOCK_SKEW_MARGIN_SECONDS: String(settings.clockSkewMarginSeconds),
    ISR_RENDER_TIMEOUT_MS: String(settings.renderTimeoutMs),
    ISR_REVALIDATE_SECONDS: String(settings.revalidateSeconds),
    ISR_MAX_BODY_BYTES: String(settings.maxBodyBytes),
    ...optional('ISR_META_TTL_SECONDS', settings.metaTtlSeconds?.toString()),
    ...optional('ISR_GONE_TTL_SECONDS', settings.goneTtlSeconds?.toString()),
    ISR_KEEP_VERSIONS: String(settings.keepVersions),
    ISR_FUNCTION_TIMEOUT_MS: String(functionSettings(kind, settings).timeout.toMilliseconds()),
    ...optional('RENDER_ORIGIN_URL', settings.renderOriginUrl),
    ...optional('ISR_UPSTREAM_SECRET_ARN', upstreamSecret?.arn),
    ...optional('ISR_UPSTREAM_SECRET_HEADER', upstreamSecret?.header),
    ...ownEnvironment(kind, settings, refs),
    POWERTOOLS_SERVICE_NAME: `isr-${kind}`,
    NODE_OPTIONS: '--enable-source-maps',
  };
}
