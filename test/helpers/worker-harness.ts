import { randomUUID } from 'node:crypto';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type ReceiveMessageResult,
  type Message,
  type QueueAttributeName,
} from '@aws-sdk/client-sqs';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import type { Clock } from '../../lambda/core/clock.js';
import { encodeIntent, type RegenerationIntent } from '../../lambda/core/page/intent.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import { loadWorkerConfig } from '../../lambda/shared/config.js';
import { buildWorkerHandler, createWorkerDeps } from '../../lambda/worker/build.js';
import type { WorkerMessage } from '../../lambda/core/worker/deps.js';
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
    // Nothing reappears on the wall clock during a test: `expireVisibility` says when.
    createTestQueues(clients, { visibilityTimeoutSeconds: 300, maxReceiveCount: 10 }),
  ]);
  const inFlight = receiptsOf(clients);
  const config = loadWorkerConfig({
    FACETHEORY_CACHE_TABLE_NAME: tableName,
    ISR_BODY_BUCKET: bucket,
    ISR_QUEUE_URL: queues.queueUrl,
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
    /**
     * The visibility timeout of every message received so far runs out now (virtual time): those
     * not deleted, and only those, are handed out again by the next poll.
     */
    expireVisibility: async () => {
      for (const { messageId, receipt } of inFlight.receipts.splice(0)) {
        const changed = await clients.sqs
          .send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: queues.queueUrl,
              ReceiptHandle: receipt,
              VisibilityTimeout: 0,
            }),
          )
          .then(
            () => true,
            () => false, // deleted meanwhile: nothing to hand out again
          );
        if (changed) inFlight.expiries.set(messageId, (inFlight.expiries.get(messageId) ?? 0) + 1);
      }
    },
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

/**
 * Receipt handles of every message the regeneration queue hands out, as it hands them out, and
 * the visibility changes the harness made per message. local-aws-sqs counts a
 * ChangeMessageVisibility as a receive (real SQS does not), so those are taken back out of the
 * `ApproximateReceiveCount` the worker is handed.
 */
function receiptsOf(clients: AwsClients) {
  const receipts: { messageId: string; receipt: string }[] = [];
  const expiries = new Map<string, number>();
  clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName !== 'ReceiveMessageCommand') return result;
      for (const message of (result.output as ReceiveMessageResult).Messages ?? []) {
        const { MessageId, ReceiptHandle, Attributes } = message;
        if (MessageId === undefined || ReceiptHandle === undefined) continue;
        receipts.push({ messageId: MessageId, receipt: ReceiptHandle });
        const counted = Number(Attributes?.ApproximateReceiveCount);
        if (Attributes !== undefined && Number.isInteger(counted)) {
          Attributes.ApproximateReceiveCount = String(counted - (expiries.get(MessageId) ?? 0));
        }
      }
      return result;
    },
    { step: 'initialize', name: 'isr-test-receipts' },
  );
  return { receipts, expiries };
}

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
