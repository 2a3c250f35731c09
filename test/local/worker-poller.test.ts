import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from '@jest/globals';
import { WorkerPoller } from '../../local/worker-poller.js';
import { createTestQueues, testClients } from '../helpers/backends.js';

const clients = testClients();
afterAll(() => clients.sqs.destroy());

/** Resolves on the next turn of the event loop, to let I/O callbacks run. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A handler that holds each batch until `release` is called with its answer. */
function heldHandler() {
  const batches: SQSEvent[] = [];
  let answer: (response: SQSBatchResponse) => void = () => undefined;
  const handler = (event: SQSEvent) => {
    batches.push(event);
    return new Promise<SQSBatchResponse>((resolve) => (answer = resolve));
  };
  return { handler, batches, release: (response: SQSBatchResponse) => answer(response) };
}

async function pollerWithMessage(handler: (event: SQSEvent) => Promise<SQSBatchResponse>) {
  const queues = await createTestQueues(clients);
  await clients.sqs.send(
    new SendMessageCommand({
      QueueUrl: queues.queueUrl,
      MessageBody: '{}',
      MessageGroupId: 'g',
      MessageDeduplicationId: 'd',
    }),
  );
  return new WorkerPoller(
    { sqs: clients.sqs, queueUrl: queues.queueUrl, queueArn: queues.queueArn, handler },
    () => undefined,
  );
}

describe('WorkerPoller.stop', () => {
  it('finishes the batch in hand first, and reports its failed records', async () => {
    const { handler, batches, release } = heldHandler();
    const poller = await pollerWithMessage(handler);
    poller.start();
    while (batches.length === 0) await tick();

    let stopped = false;
    const stopping = poller.stop().then((problems) => {
      stopped = true;
      return problems;
    });
    await tick();
    expect(stopped).toBe(false);
    const id = batches[0]?.Records[0]?.messageId ?? '';
    release({ batchItemFailures: [{ itemIdentifier: id }] });
    expect(await stopping).toEqual([`the worker batch in hand had 1 failed record(s): ${id}`]);
  });

  it('reports nothing when the batch in hand succeeds', async () => {
    const { handler, batches, release } = heldHandler();
    const poller = await pollerWithMessage(handler);
    poller.start();
    while (batches.length === 0) await tick();
    const stopping = poller.stop();
    release({ batchItemFailures: [] });
    expect(await stopping).toEqual([]);
  });

  it('ends a wait for messages at once instead of after the long poll', async () => {
    const queues = await createTestQueues(clients);
    const receives: string[] = [];
    const sqs = testClients().sqs;
    sqs.middlewareStack.add(
      (next, context) => (args) => {
        receives.push(context.commandName ?? '');
        return next(args);
      },
      { step: 'initialize' },
    );
    const poller = new WorkerPoller(
      {
        sqs,
        queueUrl: queues.queueUrl,
        queueArn: queues.queueArn,
        handler: () => Promise.resolve({ batchItemFailures: [] }),
        waitTimeSeconds: 20,
      },
      () => undefined,
    );
    poller.start();
    while (!receives.includes('ReceiveMessageCommand')) await tick();
    const at = Date.now();
    expect(await poller.stop()).toEqual([]);
    expect(Date.now() - at).toBeLessThan(5_000); // the long poll would take 20 s
    sqs.destroy();
  });
});
