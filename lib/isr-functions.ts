/**
 * The two Lambda functions: bundled locally by esbuild (never Docker) into one ESM file each,
 * configured through the environment `lambda/shared/config.ts` validates at cold start.
 */
import { fileURLToPath } from 'node:url';
import type { Duration } from 'aws-cdk-lib';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { IsrSettings } from './isr-settings.js';

export type FunctionKind = 'origin' | 'worker';

const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * One minified ESM file per function, AWS SDK included so its version is the one the tests ran.
 * `require` is defined for CommonJS dependencies inside the ESM bundle; names are kept because
 * error classes are told apart by name. Source maps carry mappings only (no sources), so they
 * stay small; NODE_OPTIONS turns them on for stack traces.
 */
export const BUNDLING: BundlingOptions = {
  forceDockerBundling: false,
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  keepNames: true,
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  bundleAwsSDK: true,
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
};

export interface ServiceFunctionOptions {
  readonly role: IRole;
  readonly settings: IsrSettings;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly tableName: string;
  readonly bucketName: string;
  /** Variables only this function reads (queue URLs, receive limit). */
  readonly environment: Record<string, string>;
}

/** A function with its own log group, writable by its role only. */
export function createServiceFunction(
  scope: Construct,
  kind: FunctionKind,
  options: ServiceFunctionOptions,
): NodejsFunction {
  const id = kind === 'origin' ? 'Origin' : 'Worker';
  const { settings, role } = options;
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: settings.logRetention,
    removalPolicy: settings.removalPolicy,
  });
  logGroup.grantWrite(role);
  return new NodejsFunction(scope, id, {
    entry: fileURLToPath(new URL(`../lambda/${kind}/index.ts`, import.meta.url)),
    handler: 'handler',
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
    runtime: Runtime.NODEJS_22_X,
    architecture: Architecture.ARM_64,
    timeout: options.timeout,
    memorySize: options.memorySize,
    role,
    logGroup,
    bundling: BUNDLING,
    environment: { ...serviceEnvironment(kind, options), ...options.environment },
  });
}

/** What both functions read, named exactly as `lambda/shared/config.ts` reads it. */
function serviceEnvironment(
  kind: FunctionKind,
  options: ServiceFunctionOptions,
): Record<string, string> {
  const { settings } = options;
  return {
    FACETHEORY_CACHE_TABLE_NAME: options.tableName,
    ISR_BODY_BUCKET: options.bucketName,
    ISR_ALLOWED_QUERY_PARAMS: settings.allowedQueryParams.join(','),
    ...(settings.tenantHeader === undefined ? {} : { ISR_TENANT_HEADER: settings.tenantHeader }),
    ISR_DEPLOY_ID: settings.deployId,
    ISR_LEASE_SECONDS: String(settings.leaseSeconds),
    ISR_RENDER_TIMEOUT_MS: String(settings.renderTimeoutMs),
    ISR_REVALIDATE_SECONDS: String(settings.revalidateSeconds),
    ISR_MAX_BODY_BYTES: String(settings.maxBodyBytes),
    ...(settings.renderOriginUrl === undefined
      ? {}
      : { RENDER_ORIGIN_URL: settings.renderOriginUrl }),
    POWERTOOLS_SERVICE_NAME: `isr-${kind}`,
    NODE_OPTIONS: '--enable-source-maps',
  };
}
