import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import type { Clock } from '../../lambda/core/clock.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import { buildOriginHandler, createOriginDeps } from '../../lambda/origin/build.js';
import { createOriginHandler, type FunctionUrlResult } from '../../lambda/origin/handler.js';
import type { OriginDeps } from '../../lambda/core/serve/request.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import { loadOriginConfig } from '../../lambda/shared/config.js';
import { createObservability } from '../../lambda/shared/observability.js';
import { functionUrlEvent } from '../../local/function-url.js';
import { lambdaContext } from '../../local/worker-poller.js';
import { createTestBucket, createTestQueues, createTestTable, testClients } from './backends.js';

export interface OriginHarnessOptions {
  /** Unset: the function's own, from its settings (`RENDER_ORIGIN_URL` in `env`). */
  readonly renderer: Renderer | undefined;
  readonly clock: Clock;
  readonly env?: Record<string, string>;
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string | undefined;
  readonly cache: string | undefined;
}

/** An origin handler wired to its own table, bucket and queues on the local backends. */
export async function createOriginHarness(options: OriginHarnessOptions) {
  const clients: AwsClients = testClients();
  const [tableName, bucket, queues] = await Promise.all([
    createTestTable(clients),
    createTestBucket(clients),
    createTestQueues(clients),
  ]);
  const config = loadOriginConfig({
    FACETHEORY_CACHE_TABLE_NAME: tableName,
    ISR_BODY_BUCKET: bucket,
    ISR_QUEUE_URL: queues.queueUrl,
    ISR_DEPLOY_ID: 'd1',
    ISR_ALLOWED_QUERY_PARAMS: 'page,lang',
    ISR_MISS_WAIT_MS: '1000',
    ...options.env,
  });
  const runtime = {
    clients,
    clock: options.clock,
    renderer: options.renderer,
    owner: 'test-origin',
  };
  const handler = buildOriginHandler(config, runtime);
  const deps = createOriginDeps(config, runtime, { warn: () => undefined });

  /** The handler for modified dependencies (fault injection). */
  const handlerWith = (overrides: Partial<OriginDeps>) =>
    createOriginHandler({
      deps: { ...deps, ...overrides },
      tenantHeader: config.tenantHeader,
      ...createObservability('origin'),
    });

  const invoke = async (
    target: string,
    init: { method?: string; headers?: Record<string, string>; handler?: typeof handler } = {},
  ): Promise<Reply> => {
    const event = functionUrlEvent({
      method: init.method ?? 'GET',
      target,
      headers: init.headers ?? {},
    });
    const result = (await (init.handler ?? handler)(
      event,
      lambdaContext(30_000),
    )) as FunctionUrlResult & {
      headers: Record<string, string>;
    };
    const text =
      result.body === undefined
        ? undefined
        : result.isBase64Encoded
          ? Buffer.from(result.body, 'base64').toString('utf8')
          : result.body;
    return {
      status: result.statusCode ?? 0,
      headers: result.headers,
      text,
      cache: result.headers['x-isr-cache'],
    };
  };

  return {
    clients,
    config,
    deps,
    queues,
    invoke,
    handlerWith,
    cacheTable: new DynamoCacheTable({ client: clients.dynamodb, tableName }),
    bodies: new S3BodyStore({ client: clients.s3, bucket }),
    keyFor: (rawPath: string, rawQueryString = '', tenant?: string) =>
      normaliseCacheKey({ rawPath, rawQueryString, tenant }, config.keyPolicy),
    /** Every message waiting on the regeneration queue (received and left to time out). */
    queued: async () => {
      const seen: Message[] = [];
      for (;;) {
        const { Messages } = await clients.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queues.queueUrl,
            MaxNumberOfMessages: 1,
            WaitTimeSeconds: 0,
            VisibilityTimeout: 60,
          }),
        );
        const message = Messages?.[0];
        if (message === undefined || seen.some((m) => m.MessageId === message.MessageId))
          return seen;
        seen.push(message);
      }
    },
    destroy: () => {
      clients.dynamodb.destroy();
      clients.s3.destroy();
      clients.sqs.destroy();
    },
  };
}

export type OriginHarness = Awaited<ReturnType<typeof createOriginHarness>>;
