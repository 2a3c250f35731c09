import {
  SendMessageCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  encodeIntent,
  type QueuedIntent,
  type RegenerationIntent,
} from '../../core/page/intent.js';
import type { BatchRegenerationQueue, FanOutQueue } from '../../core/revalidate/ports.js';
import { sendInBatches, type QueueTarget } from '../shared/sqs/send-batches.js';

export interface SqsRegenerationQueueOptions {
  readonly client: SQSClient;
  /** A FIFO queue: the deduplication ID is what collapses a storm of stale hits. */
  readonly queueUrl: string;
}

export class SqsRegenerationQueue implements BatchRegenerationQueue, FanOutQueue {
  readonly #queue: QueueTarget;

  constructor(options: SqsRegenerationQueueOptions) {
    const { client, queueUrl } = options;
    this.#queue = { client, queueUrl, name: 'the regeneration queue' };
  }

  enqueue(
    intent: RegenerationIntent,
    options: { deduplicationId: string; groupId: string },
  ): Promise<void> {
    return this.sendFanOut(encodeIntent(intent), options);
  }

  /**
   * A revalidation's fan-out step, on the same FIFO queue (its body says which kind it is); an
   * intent goes the same way.
   */
  async sendFanOut(
    body: string,
    options: { deduplicationId: string; groupId: string },
  ): Promise<void> {
    await this.#queue.client.send(
      new SendMessageCommand({
        QueueUrl: this.#queue.queueUrl,
        MessageBody: body,
        MessageDeduplicationId: options.deduplicationId,
        MessageGroupId: options.groupId,
      }),
    );
  }

  /** Ten intents a call, one call after another (a FIFO group keeps the order it is sent in). */
  async enqueueBatch(intents: readonly QueuedIntent[]): Promise<void> {
    await sendInBatches(this.#queue, intents, entryOf);
  }
}

const entryOf = (queued: QueuedIntent, index: number): SendMessageBatchRequestEntry => ({
  Id: String(index),
  MessageBody: encodeIntent(queued.intent),
  MessageDeduplicationId: queued.deduplicationId,
  MessageGroupId: queued.groupId,
});
