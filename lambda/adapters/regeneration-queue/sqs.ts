import {
  SendMessageBatchCommand,
  SendMessageCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { encodeIntent, type QueuedIntent, type RegenerationIntent } from '../../core/intent.js';
import type { BatchRegenerationQueue, FanOutQueue } from '../../core/ports.js';

/** SQS takes at most 10 entries per SendMessageBatch. */
export const SQS_BATCH_SIZE = 10;
/** Sends of the entries SQS failed in a batch, before the batch is reported as failed. */
const ENTRY_ATTEMPTS = 3;

export interface SqsRegenerationQueueOptions {
  readonly client: SQSClient;
  /** A FIFO queue: the deduplication ID is what collapses a storm of stale hits. */
  readonly queueUrl: string;
}

export class SqsRegenerationQueue implements BatchRegenerationQueue, FanOutQueue {
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

  /** A revalidation's fan-out step, on the same FIFO queue (its body says which kind it is). */
  async sendFanOut(
    body: string,
    options: { deduplicationId: string; groupId: string },
  ): Promise<void> {
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: this.#queueUrl,
        MessageBody: body,
        MessageDeduplicationId: options.deduplicationId,
        MessageGroupId: options.groupId,
      }),
    );
  }

  /** Ten intents a call, one call after another (a FIFO group keeps the order it is sent in). */
  async enqueueBatch(intents: readonly QueuedIntent[]): Promise<void> {
    for (let at = 0; at < intents.length; at += SQS_BATCH_SIZE) {
      await this.#sendBatch(intents.slice(at, at + SQS_BATCH_SIZE).map(entryOf));
    }
  }

  /** A batch, and again only its entries SQS failed (a batch can half succeed). */
  async #sendBatch(entries: SendMessageBatchRequestEntry[]): Promise<void> {
    let pending = entries;
    for (let attempt = 1; pending.length > 0; attempt += 1) {
      const { Failed = [] } = await this.#client.send(
        new SendMessageBatchCommand({ QueueUrl: this.#queueUrl, Entries: pending }),
      );
      if (Failed.length === 0) return;
      if (attempt >= ENTRY_ATTEMPTS || Failed.some((entry) => entry.SenderFault === true)) {
        const reasons = Failed.map((entry) => `${entry.Id}: ${entry.Code} ${entry.Message}`);
        throw new Error(`SendMessageBatch failed for ${reasons.join('; ')}`);
      }
      const failed = new Set(Failed.map((entry) => entry.Id));
      pending = pending.filter((entry) => failed.has(entry.Id));
    }
  }
}

const entryOf = (queued: QueuedIntent, index: number): SendMessageBatchRequestEntry => ({
  Id: String(index),
  MessageBody: encodeIntent(queued.intent),
  MessageDeduplicationId: queued.deduplicationId,
  MessageGroupId: queued.groupId,
});
