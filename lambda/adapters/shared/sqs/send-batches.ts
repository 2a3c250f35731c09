/**
 * SendMessageBatch for every queue adapter: ten entries a call, one call after another (a FIFO
 * group keeps the order it is sent in), and again only the entries SQS failed (a batch can half
 * succeed), up to `ENTRY_ATTEMPTS`; a sender fault is not retried.
 */
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** The queue a batch goes to, and its name for a failed batch's message. */
export interface QueueTarget {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly name: string;
}

/** SQS takes at most 10 entries per SendMessageBatch. */
export const SQS_BATCH_SIZE = 10;
/** Sends of the entries SQS failed in a batch, before the batch is reported as failed. */
const ENTRY_ATTEMPTS = 3;

/**
 * Sends `items` as `entryOf` makes them (its `index` is the entry's place in its batch, unique
 * there, as SQS requires of an entry's Id).
 */
export async function sendInBatches<T>(
  target: QueueTarget,
  items: readonly T[],
  entryOf: (item: T, index: number) => SendMessageBatchRequestEntry,
): Promise<void> {
  for (let at = 0; at < items.length; at += SQS_BATCH_SIZE) {
    await sendBatch(target, items.slice(at, at + SQS_BATCH_SIZE).map(entryOf));
  }
}

async function sendBatch(
  target: QueueTarget,
  entries: SendMessageBatchRequestEntry[],
): Promise<void> {
  let pending = entries;
  for (let attempt = 1; pending.length > 0; attempt += 1) {
    const { Failed = [] } = await target.client.send(
      new SendMessageBatchCommand({ QueueUrl: target.queueUrl, Entries: pending }),
    );
    if (Failed.length === 0) return;
    if (attempt >= ENTRY_ATTEMPTS || Failed.some((entry) => entry.SenderFault === true)) {
      const reasons = Failed.map((entry) => `${entry.Id}: ${entry.Code} ${entry.Message}`);
      throw new Error(`SendMessageBatch failed (${target.name}) for ${reasons.join('; ')}`);
    }
    const failed = new Set(Failed.map((entry) => entry.Id));
    pending = pending.filter((entry) => failed.has(entry.Id));
  }
}
