import { describe, expect, it, jest } from '@jest/globals';
import type { SQSRecord } from 'aws-lambda';
import { InMemoryDeadLetterQueue } from '../../../lambda/adapters/dead-letter-queue/memory.js';
import type { CdnPurge, DeadLetterQueue } from '../../../lambda/core/page/ports.js';
import { softPurgeOf } from '../../../lambda/core/revalidate/purge-message.js';
import { createObservability } from '../../../lambda/shared/observability.js';
import { createPurgerHandler } from '../../../lambda/purger/handler.js';
import { fixedContext } from '../../helpers/memory-service.js';

const record = (messageId: string, body: string, receiveCount = 1): SQSRecord => ({
  messageId,
  receiptHandle: `r-${messageId}`,
  body,
  attributes: {
    ApproximateReceiveCount: String(receiveCount),
    SentTimestamp: '0',
    SenderId: 'test',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:isr-purge',
  awsRegion: 'us-east-1',
});
const purge = (effect: string) =>
  softPurgeOf(effect, { tenant: undefined, hash: 'a'.repeat(64), pageHash: undefined }).body;

function setup(options: { cdn?: () => Promise<CdnPurge>; deadLetters?: DeadLetterQueue } = {}) {
  const { logger, metrics } = createObservability('purger');
  const add = jest.spyOn(metrics, 'addMetric');
  const info = jest.spyOn(logger, 'info');
  const letters = new InMemoryDeadLetterQueue();
  const handler = createPurgerHandler({
    deps: {
      cdn: {
        invalidateTags: () =>
          options.cdn?.() ?? Promise.resolve({ status: 'submitted', invalidationIds: ['I1'] }),
      },
      maxReceiveCount: 5,
    },
    deadLetters: options.deadLetters ?? letters,
    logger,
    metrics,
  });
  const invoke = (records: SQSRecord[]) =>
    handler({ Records: records }, fixedContext(60_000, 'isr-purger'));
  const counted = (name: string) => add.mock.calls.filter(([called]) => called === name).length;
  return { invoke, letters, counted, info };
}

describe('the purger handler', () => {
  it('acknowledges purged records, dead-letters poison with its reason, and logs one line a batch', async () => {
    const ctx = setup();
    const response = await ctx.invoke([record('m1', purge('rv_a')), record('m2', 'not json')]);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(ctx.letters.letters).toEqual([
      expect.objectContaining({
        messageId: 'm2',
        groupId: undefined,
        reason: { code: 'invalid-message', message: 'message body is not JSON' },
      }),
    ]);
    expect(ctx.counted('CdnPurgesSubmitted')).toBe(1);
    expect(ctx.counted('DeadLettered')).toBe(1);
    const [line] = ctx.info.mock.calls.filter(([message]) => message === 'cdn purge batch');
    expect(line?.[1]).toMatchObject({
      messages: 2,
      effects: 1,
      tags: 1,
      outcomes: { submitted: 1, poison: 1 },
      invalidationIds: ['I1'],
    });
  });

  it('reports a failed purge as a batch item failure, so SQS hands it out again', async () => {
    const ctx = setup({ cdn: () => Promise.reject(new Error('throttled past the budget')) });
    const response = await ctx.invoke([record('m1', purge('rv_a')), record('m2', purge('rv_b'))]);
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual([
      'm1',
      'm2',
    ]);
  });

  it('keeps a poison record for SQS to redrive when the DLQ cannot take it', async () => {
    const ctx = setup({ deadLetters: { send: () => Promise.reject(new Error('DLQ down')) } });
    const response = await ctx.invoke([record('m1', '{}')]);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
  });
});
