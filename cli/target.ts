/**
 * Where the CLI acts: the `npm start` service (default, found through its endpoints.json) or a
 * deployed stack (`--stack`, found through its CloudFormation outputs with the caller's
 * credentials). Commands only see a `Target`, so they run the same against both.
 */
import { resolve } from 'node:path';
import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import * as v from 'valibot';
import { compilePathPatterns } from '../lambda/core/path-patterns.js';
import type { CacheKeyPolicy } from '../lambda/core/page/cache-key.js';
import { createAwsClients, type AwsClients } from '../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS } from '../local/backends/local-aws.js';
import {
  endpointsFileOf,
  OpsSettingsSchema,
  readEndpointsFile,
  type OpsSettings,
} from '../local/endpoints-file.js';
import { TargetError } from './errors.js';

export interface Target {
  readonly kind: 'local' | 'stack';
  /** The stack name, or the local data directory. */
  readonly name: string;
  readonly region: string;
  readonly clients: AwsClients;
  readonly tableName: string;
  readonly bucket: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** Undefined when the stack was deployed without the revalidation endpoint. */
  readonly revalidateUrl: string | undefined;
  /** The CloudFront distribution a rollback purges; undefined locally (no CDN). */
  readonly distributionId: string | undefined;
  readonly settings: OpsSettings;
}

/** The cache-key policy the origin applies, rebuilt from the target's settings. */
export const keyPolicyOf = (settings: OpsSettings): CacheKeyPolicy => ({
  allowedQueryParams: settings.allowedQueryParams,
  renderable:
    settings.renderPaths.length === 0 ? undefined : compilePathPatterns(settings.renderPaths),
});

/** The running `npm start` of `<ISR_LOCAL_DATA_DIR or .local>`. */
export async function localTarget(env: Record<string, string | undefined>): Promise<Target> {
  const dataDir = resolve(env.ISR_LOCAL_DATA_DIR ?? '.local');
  const found = await readEndpointsFile(dataDir);
  if (found === undefined) {
    throw new TargetError(
      `no ${endpointsFileOf(dataDir)}: is npm start running? (start it, set ISR_LOCAL_DATA_DIR to its data directory, or pass --stack <name>)`,
    );
  }
  if (!isAlive(found.pid)) {
    throw new TargetError(
      `${endpointsFileOf(dataDir)} names pid ${found.pid}, which is not running: is npm start running?`,
    );
  }
  return {
    kind: 'local',
    name: dataDir,
    region: found.region,
    clients: createAwsClients({
      region: found.region,
      credentials: LOCAL_CREDENTIALS,
      endpoints: found.endpoints,
      maxAttempts: 2,
    }),
    tableName: found.tableName,
    bucket: found.bucket,
    queueUrl: found.queueUrl,
    dlqUrl: found.dlqUrl,
    revalidateUrl: found.revalidateUrl,
    distributionId: undefined,
    settings: found.settings,
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The outputs `lib/isr-stack.ts` declares that the CLI needs. */
const REQUIRED_OUTPUTS = [
  'TableName',
  'BucketName',
  'QueueUrl',
  'DeadLetterQueueUrl',
  'OpsSettings',
] as const;

/** A deployed stack, read with DescribeStacks; clients use the caller's default credentials. */
export async function stackTarget(stackName: string, cfn: CloudFormationClient): Promise<Target> {
  const outputs = await stackOutputs(stackName, cfn);
  const missing = REQUIRED_OUTPUTS.filter((name) => outputs[name] === undefined);
  if (missing.length > 0) {
    throw new TargetError(
      `stack ${stackName} lacks the outputs ${missing.join(', ')}: deploy this version of the stack first`,
    );
  }
  const parsed = v.safeParse(OpsSettingsSchema, parseJson(outputs.OpsSettings ?? ''));
  if (!parsed.success) {
    throw new TargetError(`stack ${stackName}: output OpsSettings is not what this CLI reads`);
  }
  const region = await cfn.config.region();
  return {
    kind: 'stack',
    name: stackName,
    region,
    clients: createAwsClients({ region }),
    tableName: outputs.TableName ?? '',
    bucket: outputs.BucketName ?? '',
    queueUrl: outputs.QueueUrl ?? '',
    dlqUrl: outputs.DeadLetterQueueUrl ?? '',
    revalidateUrl: outputs.RevalidateUrl,
    distributionId: outputs.DistributionId,
    settings: parsed.output,
  };
}

/** OutputKey → OutputValue of one stack. */
export async function stackOutputs(
  stackName: string,
  cfn: CloudFormationClient,
): Promise<Record<string, string | undefined>> {
  let stacks;
  try {
    ({ Stacks: stacks } = await cfn.send(new DescribeStacksCommand({ StackName: stackName })));
  } catch (error) {
    throw new TargetError(`cannot read stack ${stackName}: ${(error as Error).message}`, {
      cause: error,
      hint: awsSetupHint(error),
    });
  }
  const stack = stacks?.[0];
  if (stack === undefined) throw new TargetError(`stack ${stackName} not found`);
  return Object.fromEntries(
    (stack.Outputs ?? []).flatMap((o) => (o.OutputKey ? [[o.OutputKey, o.OutputValue]] : [])),
  );
}

/**
 * What to set when the SDK could not even ask: its own messages name neither the variable nor
 * the file (`Region is missing`, `Could not load credentials from any providers`).
 */
function awsSetupHint(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : '';
  if (/region is missing/i.test(message)) {
    return "set AWS_REGION to the stack's region (or AWS_PROFILE to a profile that has one)";
  }
  if (
    /credentials/i.test(message) &&
    error instanceof Error &&
    error.name === 'CredentialsProviderError'
  ) {
    return 'no AWS credentials: set AWS_PROFILE (aws sso login, aws configure) or AWS_ACCESS_KEY_ID';
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function destroyTarget(target: Target): void {
  target.clients.dynamodb.destroy();
  target.clients.s3.destroy();
  target.clients.sqs.destroy();
}
