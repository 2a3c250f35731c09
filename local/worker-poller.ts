/**
 * Feeds SQS batches to the worker handler (and the purger's, on the purge queue) the way
 * Lambda's event source mapping does: receive, invoke with an SQSEvent, delete only the records
 * the handler did not report as failures (the rest reappear after the visibility timeout, and
 * the queue's redrive policy moves them to the DLQ once their receive count is spent). A
 * delayed message (`DelaySeconds`, the purge queue's deadlines) is held back by local-aws-sqs
 * itself until its delay is over, on the wall clock, as SQS does; it is in memory, so a restart
 * of `npm start` drops it.
 */
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type QueueAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { describeError } from './backends/backend.js';
import { contextOf } from './lambda-context.js';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly handler: SqsHandler;
  /** @default 5 */
  readonly batchSize?: number;
  /** Long-poll wait for the first message of a batch. @default 1 */
  readonly waitTimeSeconds?: number;
  /** The function timeout the handler is told about (remaining time). @default 60_000 */
  readonly functionTimeoutMs?: number;
  /** Which function it feeds, for its messages. @default 'worker' */
  readonly name?: string;
  readonly region?: string;
}

export interface PollResult {
  readonly received: number;
  readonly failed: readonly string[];
  readonly response: SQSBatchResponse | undefined;
}

/**
 * Receives one batch, hands it to the handler, deletes what succeeded. `idle`, when it aborts,
 * ends the wait for a batch's first message (a stop with no batch in hand), never a batch.
 */
export async function pollOnce(options: PollerOptions, idle?: AbortSignal): Promise<PollResult> {
  const messages = await receiveBatch(options, idle);
  if (messages.length === 0) return { received: 0, failed: [], response: undefined };
  const event: SQSEvent = { Records: messages.map((message) => toRecord(message, options)) };
  const response = await options.handler(event, lambdaContext(options.functionTimeoutMs ?? 60_000));
  const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
  const done = messages.filter((message) => !failed.has(message.MessageId ?? ''));
  if (done.length > 0) {
    await options.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: options.queueUrl,
        Entries: done.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle ?? '',
        })),
      }),
    );
  }
  return { received: messages.length, failed: [...failed], response };
}

/**
 * local-aws-sqs long-polls badly when asked for several messages at once (it waits the whole
 * wait time and can hand out one message twice), so a batch is built one message at a time.
 */
async function receiveBatch(options: PollerOptions, idle?: AbortSignal): Promise<Message[]> {
  const batch: Message[] = [];
  const batchSize = options.batchSize ?? 5;
  while (batch.length < batchSize) {
    const first = batch.length === 0;
    if (first && idle?.aborted === true) break;
    const receive = new ReceiveMessageCommand({
      QueueUrl: options.queueUrl,
      MaxNumberOfMessages: 1,
      WaitTimeSeconds: first ? (options.waitTimeSeconds ?? 1) : 0,
      // local-aws-sqs only reports the receive count and the group when asked by this (legacy) name.
      AttributeNames: [
        'ApproximateReceiveCount' as QueueAttributeName,
        'MessageGroupId' as QueueAttributeName,
      ],
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    });
    let Messages: Message[] | undefined;
    try {
      ({ Messages } = await options.sqs.send(receive, first ? { abortSignal: idle } : {}));
    } catch (error) {
      if (first && idle?.aborted === true) break;
      throw error;
    }
    const message = Messages?.[0];
    if (message === undefined) break;
    if (batch.some((seen) => seen.MessageId === message.MessageId)) break;
    batch.push(message);
  }
  return batch;
}

function toRecord(message: Message, options: PollerOptions): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp:
        attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      MessageGroupId: attributes.MessageGroupId,
      MessageDeduplicationId: attributes.MessageDeduplicationId,
      SequenceNumber: attributes.SequenceNumber,
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: options.queueArn,
    awsRegion: options.region ?? 'us-east-1',
  };
}

/** The part of a Lambda context the handlers use: remaining time drives idempotency expiry. */
export function lambdaContext(timeoutMs: number, functionName = 'isr-local'): Context {
  const deadline = Date.now() + timeoutMs;
  return contextOf({
    functionName,
    remainingMs: () => Math.max(0, deadline - Date.now()),
    logStreamName: 'local',
  });
}

/** Polls until stopped; one batch at a time, like a function with reserved concurrency 1. */
export class WorkerPoller {
  readonly #options: PollerOptions;
  readonly #onError: (error: unknown) => void;
  #running: Promise<void> | undefined;
  #stopping = false;
  /** Aborted on stop: ends a wait for messages at once instead of after the long poll. */
  readonly #idle = new AbortController();
  /** What went wrong with the batch that was in hand when the stop was asked for. */
  readonly #failedWhileStopping: string[] = [];

  constructor(options: PollerOptions, onError: (error: unknown) => void) {
    this.#options = options;
    this.#onError = onError;
  }

  get #name(): string {
    return this.#options.name ?? 'worker';
  }

  start(): void {
    this.#running ??= this.#loop();
  }

  /**
   * Stops after the batch in hand is finished, so no message is half-processed. Resolves with
   * what failed in that batch (records reported as failures, or the poll itself).
   */
  async stop(): Promise<readonly string[]> {
    this.#stopping = true;
    this.#idle.abort();
    await this.#running;
    return this.#failedWhileStopping;
  }

  async #loop(): Promise<void> {
    while (!this.#stopping) {
      try {
        const { failed } = await pollOnce(this.#options, this.#idle.signal);
        if (this.#stopping && failed.length > 0)
          this.#failedWhileStopping.push(
            `the ${this.#name} batch in hand had ${failed.length} failed record(s): ${failed.join(', ')}`,
          );
      } catch (error) {
        this.#onError(error);
        if (this.#stopping) {
          this.#failedWhileStopping.push(
            `the ${this.#name} batch in hand failed: ${describeError(error)}`,
          );
        } else {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    }
  }
}
