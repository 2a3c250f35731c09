/**
 * The purge queue on SQS: a standard queue (FIFO queues take no per-message delay), so a
 * deadline purge is one message with `DelaySeconds`. Purges go ten to a SendMessageBatch call;
 * entries SQS fails in a batch are sent again, as the regeneration queue does. A purge sent
 * twice is harmless: the purger's CDN identity makes one invalidation of the same tags.
 */
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { PurgeQueue } from '../../core/ports.js';
import type { QueuedPurge } from '../../core/revalidate/purge-message.js';
import { SQS_BATCH_SIZE } from '../regeneration-queue/sqs.js';

/** Sends of the entries SQS failed in a batch, before the batch is reported as failed. */
const ENTRY_ATTEMPTS = 3;

export interface SqsPurgeQueueOptions {
  readonly client: SQSClient;
  /** A standard queue: each purge carries its own delay. */
  readonly queueUrl: string;
}

export class SqsPurgeQueue implements PurgeQueue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;

  constructor(options: SqsPurgeQueueOptions) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
  }

  async send(purges: readonly QueuedPurge[]): Promise<void> {
    for (let at = 0; at < purges.length; at += SQS_BATCH_SIZE) {
      await this.#sendBatch(purges.slice(at, at + SQS_BATCH_SIZE).map(entryOf));
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
        throw new Error(`SendMessageBatch to the purge queue failed for ${reasons.join('; ')}`);
      }
      const failed = new Set(Failed.map((entry) => entry.Id));
      pending = pending.filter((entry) => failed.has(entry.Id));
    }
  }
}

const entryOf = (purge: QueuedPurge, index: number): SendMessageBatchRequestEntry => ({
  Id: String(index),
  MessageBody: purge.body,
  ...(purge.delaySeconds > 0 ? { DelaySeconds: purge.delaySeconds } : {}),
});
