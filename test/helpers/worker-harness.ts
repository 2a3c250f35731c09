import { randomUUID } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../lambda/core/cache-key.js';
import type { Clock } from '../../lambda/core/clock.js';
import { encodeIntent, type RegenerationIntent } from '../../lambda/core/intent.js';
import type { Renderer } from '../../lambda/core/ports.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import { loadWorkerConfig } from '../../lambda/shared/config.js';
import { buildWorkerHandler, createWorkerDeps } from '../../lambda/worker/build.js';
import type { WorkerMessage } from '../../lambda/core/regenerate/process-message.js';
import { lambdaContext, pollOnce } from '../../local/worker-poller.js';
import type { RegenerationQueues } from '../../local/provision.js';
import { createTestBucket, createTestQueues, createTestTable, testClients } from './backends.js';

const silentLog = { warn: () => undefined };

export interface WorkerHarnessOptions {
  readonly renderer: Renderer;
  readonly clock: Clock;
  readonly env?: Record<string, string>;
}

/** A worker wired to its own table, bucket and FIFO queue + DLQ on the local backends. */
export async function createWorkerHarness(options: WorkerHarnessOptions) {
  const clients: AwsClients = testClients();
  const [tableName, bucket, queues] = await Promise.all([
    createTestTable(clients),
    createTestBucket(clients),
    createTestQueues(clients, { visibilityTimeoutSeconds: 1, maxReceiveCount: 10 }),
  ]);
  const config = loadWorkerConfig({
    FACETHEORY_CACHE_TABLE_NAME: tableName,
    ISR_BODY_BUCKET: bucket,
    ISR_DLQ_URL: queues.dlqUrl,
    ISR_DEPLOY_ID: 'd1',
    ...options.env,
  });
  const runtime = {
    clients,
    clock: options.clock,
    renderer: options.renderer,
    owner: 'test-worker',
  };
  const deps = createWorkerDeps(config, runtime, silentLog);
  const handler = buildWorkerHandler(config, runtime);
  const cacheTable = new DynamoCacheTable({ client: clients.dynamodb, tableName });
  const bodies = new S3BodyStore({ client: clients.s3, bucket });

  return {
    clients,
    config,
    deps,
    handler,
    cacheTable,
    bodies,
    queues,
    tableName,
    bucket,
    keyFor: (path: string) => normaliseCacheKey({ rawPath: path }, config.keyPolicy),
    /** Tells the idempotency layer how long "this invocation" has left. */
    startInvocation: (remainingMs = 60_000) =>
      deps.idempotency.config.registerLambdaContext(lambdaContext(remainingMs)),
    row: async (pk: string, sk: string) =>
      (
        await clients.dynamodb.send(
          new GetItemCommand({
            TableName: tableName,
            Key: { pk: { S: pk }, sk: { S: sk } },
            ConsistentRead: true,
          }),
        )
      ).Item,
    bodyText: async (s3Key: string) => {
      const got = await bodies.getBody(s3Key);
      return new TextDecoder().decode(got.body);
    },
    send: (body: string, groupId = 'g1') => sendTo(clients, queues, body, groupId),
    poll: (batchSize = 5) =>
      pollOnce({
        sqs: clients.sqs,
        queueUrl: queues.queueUrl,
        queueArn: queues.queueArn,
        handler,
        batchSize,
        waitTimeSeconds: 0,
      }),
    deadLetters: () => drain(clients, queues.dlqUrl),
    destroy: () => {
      clients.dynamodb.destroy();
      clients.s3.destroy();
      clients.sqs.destroy();
    },
  };
}

export type WorkerHarness = Awaited<ReturnType<typeof createWorkerHarness>>;

export const intentFor = (path: string, extra: Partial<RegenerationIntent> = {}): string =>
  encodeIntent({ v: 1, path, query: '', deployId: 'd1', ...extra });

export const message = (messageId: string, body: string, receiveCount = 1): WorkerMessage => ({
  messageId,
  body,
  receiveCount,
  groupId: 'g1',
});

async function sendTo(
  clients: AwsClients,
  queues: RegenerationQueues,
  body: string,
  groupId: string,
) {
  const { MessageId } = await clients.sqs.send(
    new SendMessageCommand({
      QueueUrl: queues.queueUrl,
      MessageBody: body,
      MessageGroupId: groupId,
      MessageDeduplicationId: randomUUID(),
    }),
  );
  return MessageId ?? '';
}

async function drain(clients: AwsClients, queueUrl: string) {
  const letters: Message[] = [];
  for (;;) {
    const { Messages } = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        AttributeNames: ['ApproximateReceiveCount' as QueueAttributeName],
      }),
    );
    const letter = Messages?.[0];
    if (letter === undefined || letters.some((seen) => seen.MessageId === letter.MessageId))
      return letters;
    letters.push(letter);
  }
}
