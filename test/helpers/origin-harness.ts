import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import type { Clock } from '../../lambda/core/clock.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import { buildStreamingOriginHandler, createOriginDeps } from '../../lambda/origin/build.js';
import type { OriginDeps } from '../../lambda/core/serve/request.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import { loadOriginConfig } from '../../lambda/shared/config.js';
import { createObservability } from '../../lambda/shared/observability.js';
import { functionUrlEvent } from '../../local/function-url.js';
import type { StreamingOrigin } from '../../local/cloudfront/origins.js';
import { installLambdaStreaming } from '../../local/lambda-streaming.js';
import { lambdaContext } from '../../local/worker-poller.js';
import { createTestBucket, createTestQueues, createTestTable, testClients } from './backends.js';
import { invokeCollected, streamingOrigin } from './streaming-origin.js';

export interface OriginHarnessOptions {
  /** Unset: the function's own, from its settings (`RENDER_ORIGIN_URL` in `env`). */
  readonly renderer: Renderer | undefined;
  readonly clock: Clock;
  readonly env?: Record<string, string>;
}

export interface Reply {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The body as UTF-8; undefined when the stream carried no body byte (HEAD, a 304). */
  readonly text: string | undefined;
  readonly cache: string | undefined;
  /** Each Set-Cookie of the prelude, apart (payload 2.0's `cookies`). */
  readonly cookies: readonly string[];
}

/**
 * The origin as deployed (RESPONSE_STREAM, called as Lambda's runtime calls it) wired to its own table, bucket and queues on the local backends. */
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
  const deps = createOriginDeps(config, runtime, { warn: () => undefined });

  /** The handler for modified dependencies (fault injection). */
  const handlerWith = (overrides: Partial<OriginDeps>): StreamingOrigin =>
    streamingOrigin({
      deps: { ...deps, ...overrides },
      tenantHeader: config.tenantHeader,
      ...createObservability('origin'),
    });
  // Built as lambda/origin/index.ts builds it, under the runtime's `awslambda` global.
  installLambdaStreaming();
  const handler: StreamingOrigin = { streaming: buildStreamingOriginHandler(config, runtime) };

  const invoke = async (
    target: string,
    init: {
      method?: string;
      headers?: Record<string, string>;
      handler?: StreamingOrigin;
      /** The handler may throw (a 502 at the function URL); otherwise a throw fails the test. */
      crashes?: 'expected';
    } = {},
  ): Promise<Reply> => {
    const event = functionUrlEvent({
      method: init.method ?? 'GET',
      target,
      headers: init.headers ?? {},
    });
    const answer = await invokeCollected(init.handler ?? handler, event, lambdaContext(30_000), {
      ...(init.crashes === undefined ? {} : { crashes: init.crashes }),
    });
    return {
      status: answer.statusCode,
      headers: answer.headers,
      text: answer.body.length === 0 ? undefined : answer.body.toString('utf8'),
      cache: answer.headers['x-isr-cache'],
      cookies: answer.cookies,
    };
  };

  return {
    clients,
    config,
    deps,
    queues,
    /** The origin as built (a test's defects wrap it). */
    handler,
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
