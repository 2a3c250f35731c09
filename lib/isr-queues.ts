/**
 * The regeneration queue and its dead-letter queue: FIFO, so the origin's deduplication ID
 * collapses a storm of stale hits on one generation into one intent.
 */
import { Duration } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import {
  DeduplicationScope,
  FifoThroughputLimit,
  Queue,
  QueueEncryption,
} from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { VISIBILITY_TIMEOUT_FACTOR } from './isr-settings.js';

export interface RegenerationQueues {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
}

export interface RegenerationQueueOptions {
  /** The worker's timeout: the visibility timeout is six times it, as AWS advises. */
  readonly workerTimeout: Duration;
  readonly maxReceiveCount: number;
}

/**
 * Both queues SSE-SQS and TLS only. The DLQ keeps letters 14 days (the maximum) for a replay;
 * the queue keeps intents 4 days, since a stale hit re-enqueues anyway.
 */
export function createRegenerationQueues(
  scope: Construct,
  options: RegenerationQueueOptions,
): RegenerationQueues {
  const deadLetterQueue = new Queue(scope, 'DeadLetterQueue', {
    fifo: true,
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  const queue = new Queue(scope, 'RegenerationQueue', {
    fifo: true,
    // The origin sets a deduplication ID per intent; a key always maps to the same group, so
    // per-group dedupe and throughput (high-throughput FIFO) lose nothing.
    contentBasedDeduplication: false,
    deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
    fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(4),
    visibilityTimeout: Duration.seconds(
      options.workerTimeout.toSeconds() * VISIBILITY_TIMEOUT_FACTOR,
    ),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: options.maxReceiveCount },
  });
  return { queue, deadLetterQueue };
}

/**
 * The worker consumes the queue in batches, reporting failures per record, with a bounded
 * concurrency (the reserved concurrency of the worker covers it, see `isr-settings.ts`).
 */
export function consumeRegenerationQueue(
  worker: IFunction,
  queue: Queue,
  options: { readonly workerBatchSize: number; readonly workerMaxConcurrency: number },
): void {
  worker.addEventSource(
    new SqsEventSource(queue, {
      batchSize: options.workerBatchSize,
      maxConcurrency: options.workerMaxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
}
