import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { encodeIntent, type RegenerationIntent } from '../../core/intent.js';
import type { RegenerationQueue } from '../../core/ports.js';

export interface SqsRegenerationQueueOptions {
  readonly client: SQSClient;
  /** A FIFO queue: the deduplication ID is what collapses a storm of stale hits. */
  readonly queueUrl: string;
}

export class SqsRegenerationQueue implements RegenerationQueue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(options: SqsRegenerationQueueOptions) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
  }

  async enqueue(
    intent: RegenerationIntent,
    options: { deduplicationId: string; groupId: string },
  ): Promise<void> {
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: this.#queueUrl,
        MessageBody: encodeIntent(intent),
        MessageDeduplicationId: options.deduplicationId,
        MessageGroupId: options.groupId,
      }),
    );
  }
}
