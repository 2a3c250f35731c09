/**
 * The purge queue on SQS: a standard queue (FIFO queues take no per-message delay), so a
 * deadline purge is one message with `DelaySeconds`. Purges go ten to a SendMessageBatch call;
 * entries SQS fails in a batch are sent again (`sendInBatches`). A purge sent
 * twice is harmless: the purger's CDN identity makes one invalidation of the same tags.
 */
import type { SendMessageBatchRequestEntry, SQSClient } from '@aws-sdk/client-sqs';
import type { PurgeQueue } from '../../core/revalidate/ports.js';
import type { QueuedPurge } from '../../core/revalidate/purge-message.js';
import { sendInBatches, type QueueTarget } from '../shared/sqs/send-batches.js';

export interface SqsPurgeQueueOptions {
  readonly client: SQSClient;
  /** A standard queue: each purge carries its own delay. */
  readonly queueUrl: string;
}

export class SqsPurgeQueue implements PurgeQueue {
  readonly #queue: QueueTarget;

  constructor(options: SqsPurgeQueueOptions) {
    this.#queue = { client: options.client, queueUrl: options.queueUrl, name: 'the purge queue' };
  }

  async send(purges: readonly QueuedPurge[]): Promise<void> {
    await sendInBatches(this.#queue, purges, entryOf);
  }
}

const entryOf = (purge: QueuedPurge, index: number): SendMessageBatchRequestEntry => ({
  Id: String(index),
  MessageBody: purge.body,
  ...(purge.delaySeconds > 0 ? { DelaySeconds: purge.delaySeconds } : {}),
});
