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
import type { FunctionKind } from '../lambda/core/settings/index.js';
import { BUNDLE_HANDLER, functionCode } from './isr-function-code.js';
import {
  functionTimeout,
  settingsEnvironment,
  type FunctionRefs,
  type IsrSettings,
} from './isr-settings.js';

export type { FunctionKind, FunctionRefs };

/** Construct id of each function (and the prefix of its log group's). */
export const FUNCTION_IDS: Readonly<Record<FunctionKind, string>> = {
  origin: 'Origin',
  worker: 'Worker',
  revalidate: 'Revalidate',
  sweeper: 'Sweeper',
  purger: 'Purger',
};

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
  if (kind === 'sweeper' || kind === 'purger') return false; // they never call the upstream
  return kind === 'revalidate'
    ? settings.revalidateWebhookSecretArn !== undefined
    : settings.upstreamSecret !== undefined;
};

/**
 * Each function's size and reserved concurrency. The sweeper runs alone (one reserved
 * instance): a run that outlived the 5-minute schedule never overlaps the next, which would
 * list the same page of bodies twice. The revalidate function is capped: with a webhook key its
 * URL is open to anyone.
 */
function functionSettings(kind: FunctionKind, settings: IsrSettings) {
  const timeout = functionTimeout(kind, settings);
  switch (kind) {
    case 'origin':
      return {
        timeout,
        memorySize: settings.originMemorySize,
        reservedConcurrency: settings.originReservedConcurrency,
      };
    case 'worker':
      return {
        timeout,
        memorySize: settings.workerMemorySize,
        reservedConcurrency: settings.workerReservedConcurrency,
      };
    case 'sweeper':
      return { timeout, memorySize: 256, reservedConcurrency: 1 };
    // Bounded by its event source (at most two at once), so nothing is reserved for it.
    case 'purger':
      return { timeout, memorySize: 256, reservedConcurrency: undefined };
    case 'revalidate':
      return {
        timeout,
        memorySize: settings.revalidateMemorySize,
        reservedConcurrency: settings.revalidateReservedConcurrency,
      };
  }
}

/**
 * Everything a function reads, named exactly as `lambda/shared/config.ts` reads it: the settings
 * it reads (from the settings table, `settingsEnvironment`), and the names Powertools and Node
 * read. Pure, so a test can feed the same settings to synth and to each cold start.
 */
export function functionEnvironment(
  kind: FunctionKind,
  settings: IsrSettings,
  refs: FunctionRefs,
): Record<string, string> {
  return {
    ...settingsEnvironment(kind, settings, refs),
    POWERTOOLS_SERVICE_NAME: `isr-${kind}`,
    NODE_OPTIONS: '--enable-source-maps',
  };
}
