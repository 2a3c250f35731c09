import { TestClock } from './clock.js';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { CdnInvalidator, SecretSource } from '../../lambda/core/page/ports.js';
import { buildRevalidateHandler } from '../../lambda/revalidate/build.js';
import { loadRevalidateConfig, loadWorkerConfig } from '../../lambda/shared/config.js';
import { createWorkerDeps } from '../../lambda/worker/build.js';
import { processMessage } from '../../lambda/core/worker/process-message.js';
import { functionUrlEvent } from '../../local/function-url.js';
import { lambdaContext } from '../../local/worker-poller.js';
import type { OriginHarness } from './origin-harness.js';

export interface RevalidateHarnessOptions {
  readonly cdn: CdnInvalidator;
  readonly env?: Record<string, string>;
  readonly secret?: SecretSource;
  /** Loopback without a key (local mode); else AWS_IAM is assumed. @default true */
  readonly open?: boolean;
}

export interface RevalidateCall {
  readonly key?: string;
  readonly headers?: Record<string, string>;
  readonly principal?: string;
  readonly method?: string;
  /** @default '/_isr/revalidate' */
  readonly target?: string;
}

/**
 * The revalidate handler on an origin harness's table and queue, and a worker on the same
 * backends that works off what the revalidation (or a STALE hit) queued.
 */
export function createRevalidateHarness(h: OriginHarness, options: RevalidateHarnessOptions) {
  const env = {
    FACETHEORY_CACHE_TABLE_NAME: h.config.tableName,
    ISR_BODY_BUCKET: h.config.bucket,
    ISR_QUEUE_URL: h.queues.queueUrl,
    ISR_DLQ_URL: h.queues.dlqUrl,
    ISR_DEPLOY_ID: 'd1',
    ISR_ALLOWED_QUERY_PARAMS: 'page,lang',
    ...options.env,
  };
  // The 202 waits for origins' cached in-progress reads to run out: on a test clock, that wait
  // moves the shared clock on at once (the origin harness reads the same clock).
  const shared = h.deps.clock;
  const clock =
    shared instanceof TestClock
      ? { now: () => shared.now(), sleep: (ms: number) => Promise.resolve(shared.advanceMs(ms)) }
      : shared;
  const runtime = {
    clients: h.clients,
    clock,
    renderer: h.deps.renderer,
    cdn: options.cdn,
    revalidateSecret: options.secret,
    revalidateOpen: options.open ?? true,
  };
  const handler = buildRevalidateHandler(loadRevalidateConfig(env), runtime);
  // The worker keeps the shared clock itself: its render timeout must not fire at once.
  const workerDeps = createWorkerDeps(
    loadWorkerConfig(env),
    { ...runtime, clock: shared },
    { warn: () => undefined },
  );

  const post = async (body: unknown, call: RevalidateCall = {}) => {
    const headers = {
      'content-type': 'application/json',
      ...(call.key === undefined ? {} : { 'idempotency-key': call.key }),
      ...call.headers,
    };
    const base = functionUrlEvent({
      method: call.method ?? 'POST',
      target: call.target ?? '/_isr/revalidate',
      headers,
    });
    const event: LambdaFunctionURLEvent = {
      ...base,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      requestContext: {
        ...base.requestContext,
        ...(call.principal === undefined
          ? {}
          : { authorizer: { iam: { userArn: call.principal } } as never }),
      },
    };
    const result = (await handler(event, lambdaContext(30_000, 'isr-revalidate'))) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };
    return { ...result, json: JSON.parse(result.body) as Record<string, unknown> };
  };

  /**
   * Works off the whole regeneration queue (receive, process, delete, until it is empty).
   * @returns the path of each intent processed
   */
  const work = async (): Promise<string[]> => {
    workerDeps.idempotency.config.registerLambdaContext(lambdaContext(60_000));
    const paths: string[] = [];
    for (;;) {
      const { Messages = [] } = await h.clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: h.queues.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: 30,
        }),
      );
      if (Messages.length === 0) return paths;
      for (const message of Messages) {
        // A fan-out step (a tag marked in the background) is worked off too; it has no path.
        const { path } = JSON.parse(message.Body ?? '{}') as { path?: string };
        if (path !== undefined) paths.push(path);
        await processMessage(workerDeps, {
          messageId: message.MessageId ?? '',
          body: message.Body ?? '',
          receiveCount: 1,
          groupId: undefined,
        });
        await h.clients.sqs.send(
          new DeleteMessageCommand({
            QueueUrl: h.queues.queueUrl,
            ReceiptHandle: message.ReceiptHandle,
          }),
        );
      }
    }
  };

  const requestRow = async (pk: string, key: string) =>
    (
      await h.clients.dynamodb.send(
        new GetItemCommand({
          TableName: h.config.tableName,
          Key: { pk: { S: pk }, sk: { S: `REQ#${key}` } },
          ConsistentRead: true,
        }),
      )
    ).Item;

  return { handler, post, work, requestRow };
}
