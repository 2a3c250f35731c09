/**
 * A prebuilt Lambda bundle (`dist/functions/<fn>`) run in a child process with the environment
 * the synthesized template gives its function: the template's CloudFormation references are
 * pointed at the local backends, and the bundle's own AWS SDK reaches them through the SDK's
 * standard variables (endpoint URLs, credentials), as nothing in the bundle is changed.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Template } from 'aws-cdk-lib/assertions';
import { functionBundleDirectory } from '../../lib/isr-function-code.js';
import type { FunctionKind } from '../../lib/isr-functions.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import { readFunctionUrlStream } from '../../local/lambda-streaming.js';
import { resourceOf, type LambdaProperties } from '../lib/stack-fixture.js';

/** The local stand-ins of the stack's table, bucket and queues. */
export interface LocalResources {
  readonly tableName: string;
  readonly bucketName: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** The purge queue and its DLQ (standard queues). */
  readonly purgeQueueUrl: string;
  readonly purgeDlqUrl: string;
}

/** Variables the template sets to a CloudFormation reference, and what they become locally. */
export const LOCAL_REFERENCES: Record<string, (local: LocalResources) => string> = {
  FACETHEORY_CACHE_TABLE_NAME: (local) => local.tableName,
  ISR_BODY_BUCKET: (local) => local.bucketName,
  ISR_QUEUE_URL: (local) => local.queueUrl,
  ISR_DLQ_URL: (local) => local.dlqUrl,
  ISR_PURGE_QUEUE_URL: (local) => local.purgeQueueUrl,
  ISR_PURGE_DLQ_URL: (local) => local.purgeDlqUrl,
};
/** No CloudFront locally: without its distribution id, purges answer `not-configured`. */
const DROPPED = new Set(['ISR_CDN_DISTRIBUTION_ID']);

/** One function's environment from the template; an unmapped reference fails loudly. */
export function deployedEnvironment(
  template: Template,
  logicalId: string,
  local: LocalResources,
): Record<string, string> {
  const variables = resourceOf<LambdaProperties>(template, logicalId).Properties.Environment
    .Variables;
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(variables)) {
    if (DROPPED.has(name)) continue;
    const reference = LOCAL_REFERENCES[name];
    if (typeof value === 'string') environment[name] = value;
    else if (reference !== undefined) environment[name] = reference(local);
    else throw new Error(`${logicalId}: no local value for ${name} = ${JSON.stringify(value)}`);
  }
  return environment;
}

/** What the Lambda runtime adds: region, the role's credentials, and where AWS is (locally). */
function runtimeEnvironment(
  functionName: string,
  endpoints: BundleOptions['endpoints'] = {},
): Record<string, string> {
  const endpoint = (name: string) => {
    const service = /ISR_TEST_(\w+)_ENDPOINT/.exec(name)?.[1]?.toLowerCase() ?? '';
    const value = endpoints[service as keyof typeof endpoints] ?? process.env[name];
    if (value === undefined) throw new Error(`${name} is unset: run through jest's globalSetup`);
    return value;
  };
  return {
    PATH: process.env.PATH ?? '',
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_SESSION_TOKEN: `session-of-${functionName}`,
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_ENDPOINT_URL_DYNAMODB: endpoint('ISR_TEST_DYNAMODB_ENDPOINT'),
    AWS_ENDPOINT_URL_S3: endpoint('ISR_TEST_S3_ENDPOINT'),
    AWS_ENDPOINT_URL_SQS: endpoint('ISR_TEST_SQS_ENDPOINT'),
    // s3rver corrupts uploads sent with streaming checksum trailers (see shared/aws-clients.ts).
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
}

export interface DeployedBundle {
  /** Invokes the handler with one event, as Lambda would; resolves to what it returned. */
  invoke<T = unknown>(event: unknown): Promise<T>;
  /** Every JSON line the function wrote to stdout (its Powertools logs). */
  readonly logs: Record<string, unknown>[];
  /** The secrets it read through the Parameters and Secrets extension, by ARN. */
  readonly secretReads: string[];
  stop(): Promise<void>;
}

export interface BundleOptions {
  readonly kind: FunctionKind;
  /** The function's environment, from `deployedEnvironment`. */
  readonly environment: Record<string, string>;
  /** Secret values the Parameters and Secrets extension holds, by ARN. */
  readonly extensionSecrets?: Record<string, string>;
  /** @default 30_000 */
  readonly timeoutMs?: number;
  /** Where its SDK reaches each backend (a recording front). @default the backends */
  readonly endpoints?: Partial<Record<'dynamodb' | 's3' | 'sqs', string>>;
  /** @default `isr-<kind>` */
  readonly functionName?: string;
}

const RUNNER = fileURLToPath(new URL('./bundle-runner.js', import.meta.url));

/** Starts the bundle (its cold start) and resolves once its module has loaded. */
export async function startBundle(options: BundleOptions): Promise<DeployedBundle> {
  const functionName = options.functionName ?? `isr-${options.kind}`;
  const bundle = `${functionBundleDirectory(options.kind)}/index.mjs`;
  const child = fork(RUNNER, [bundle, functionName, String(options.timeoutMs ?? 30_000)], {
    env: {
      ...runtimeEnvironment(functionName, options.endpoints),
      ...options.environment,
      ISR_TEST_EXTENSION_SECRETS: JSON.stringify(options.extensionSecrets ?? {}),
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  await ready(child, () => stderr);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const secretReads: string[] = [];
  child.on(
    'message',
    (message: { id?: number; result?: unknown; error?: string; secretRead?: string }) => {
      if (message.secretRead !== undefined) secretReads.push(message.secretRead);
      const waiter = message.id === undefined ? undefined : pending.get(message.id);
      if (waiter === undefined) return;
      pending.delete(message.id!);
      if (message.error === undefined) waiter.resolve(functionUrlResult(message.result));
      else waiter.reject(new Error(`${functionName} threw: ${message.error}`));
    },
  );
  let next = 0;
  return {
    logs,
    secretReads,
    invoke: <T>(event: unknown) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, event });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

/**
 * A streaming handler's bytes as its RESPONSE_STREAM function URL answers them: the prelude's
 * status, headers and cookies, the body base64-encoded (bytes as they are). Others as returned.
 */
async function functionUrlResult(result: unknown): Promise<unknown> {
  const streamed = (result as { streamed?: { contentType: string; bytes: string } } | null)
    ?.streamed;
  if (streamed === undefined) return result;
  const answer = await readFunctionUrlStream(
    Buffer.from(streamed.bytes, 'base64'),
    streamed.contentType,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of answer.body) chunks.push(Buffer.from(chunk));
  return {
    statusCode: answer.status,
    headers: answer.headers,
    ...(answer.cookies.length === 0 ? {} : { cookies: answer.cookies }),
    body: Buffer.concat(chunks).toString('base64'),
    isBase64Encoded: true,
  };
}

/** Resolves when the runner says the bundle loaded; rejects with its stderr if it exits first. */
function ready(child: ChildProcess, stderr: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`the bundle exited (${code}) before it loaded:\n${stderr()}`));
    child.once('exit', onExit);
    child.once('message', () => {
      child.off('exit', onExit);
      resolve();
    });
  });
}
