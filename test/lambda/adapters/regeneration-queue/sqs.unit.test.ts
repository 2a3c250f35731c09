/** The SQS adapter's batching, on a mocked client: how many calls, and what a half-failed batch does. */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { SqsRegenerationQueue } from '../../../../lambda/adapters/regeneration-queue/sqs.js';
import type { QueuedIntent } from '../../../../lambda/core/page/intent.js';

const client = new SQSClient({ region: 'us-east-1' });
const sqs = mockClient(client);
afterEach(() => {
  sqs.reset();
});

const queue = new SqsRegenerationQueue({ client, queueUrl: 'https://sqs.local/q.fifo' });
const intents = (count: number): QueuedIntent[] =>
  Array.from({ length: count }, (_, i) => ({
    intent: { v: 1, path: `/p${i}`, query: '', deployId: 'd1' },
    deduplicationId: `d${i}`,
    groupId: `g${i}`,
  }));
const sentIds = () =>
  sqs
    .commandCalls(SendMessageBatchCommand)
    .map((call) => (call.args[0].input.Entries ?? []).map((entry) => entry.MessageDeduplicationId));

describe('SqsRegenerationQueue.enqueueBatch', () => {
  it('sends ten intents a call: 25 intents are 3 calls', async () => {
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await queue.enqueueBatch(intents(25));
    expect(sentIds().map((ids) => ids.length)).toEqual([10, 10, 5]);
  });

  it('sends again only the entries SQS failed in a batch', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [],
        Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false, Message: 'retry' }],
      })
      .resolves({ Successful: [], Failed: [] });
    await queue.enqueueBatch(intents(3));
    expect(sentIds()).toEqual([['d0', 'd1', 'd2'], ['d1']]);
  });

  it('throws when SQS keeps failing an entry, or refuses it as the sender fault it is', async () => {
    const failing = { Id: '0', Code: 'InternalError', SenderFault: false, Message: 'down' };
    sqs.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [failing] });
    await expect(queue.enqueueBatch(intents(1))).rejects.toThrow(/0: InternalError down/);
    expect(sentIds()).toHaveLength(3);
    sqs.reset();
    sqs
      .on(SendMessageBatchCommand)
      .resolves({ Successful: [], Failed: [{ ...failing, SenderFault: true }] });
    await expect(queue.enqueueBatch(intents(1))).rejects.toThrow(/SendMessageBatch failed/);
    expect(sentIds()).toHaveLength(1);
  });

  it('makes no call for no intents', async () => {
    await queue.enqueueBatch([]);
    expect(sentIds()).toEqual([]);
  });
});
