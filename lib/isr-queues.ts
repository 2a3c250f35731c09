/**
 * The regeneration queue and its dead-letter queue: FIFO, so the origin's deduplication ID
 * collapses a storm of stale hits on one generation into one intent. The purge queue and its
 * dead-letter queue: standard, so a purge can be delayed until its deadline.
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

/** Every queue: SSE-SQS and TLS only. */
const SECURED = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true } as const;
/** A DLQ keeps letters 14 days, SQS's maximum, for a replay. */
const DEAD_LETTER_RETENTION = Duration.days(14);
/** A queue keeps messages 4 days: a stale hit re-enqueues anyway. */
const RETENTION = Duration.days(4);

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
    ...SECURED,
    retentionPeriod: DEAD_LETTER_RETENTION,
  });
  const queue = new Queue(scope, 'RegenerationQueue', {
    fifo: true,
    // The origin sets a deduplication ID per intent; a key always maps to the same group, so
    // per-group dedupe and throughput (high-throughput FIFO) lose nothing.
    contentBasedDeduplication: false,
    deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
    fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
    ...SECURED,
    retentionPeriod: RETENTION,
    visibilityTimeout: Duration.seconds(
      options.workerTimeout.toSeconds() * VISIBILITY_TIMEOUT_FACTOR,
    ),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: options.maxReceiveCount },
  });
  return { queue, deadLetterQueue };
}

/**
 * The worker consumes the queue in batches, reporting failures per record, with a bounded
 * concurrency: the event source's maximum concurrency, which "limits the number of concurrent
 * instances that the Amazon SQS event source can invoke" (2..1000,
 * https://docs.aws.amazon.com/lambda/latest/dg/API_ScalingConfig.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html) and, unlike a
 * reserved concurrency, sets nothing aside from the account.
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

export interface PurgeQueues {
  readonly purgeQueue: Queue;
  readonly purgeDeadLetterQueue: Queue;
}

/**
 * The purge queue and its DLQ (soft purges, `lambda/core/revalidate/soft-purge.ts`): standard,
 * since a deadline purge is one message delayed by `DelaySeconds`, which FIFO queues do not
 * take per message; order does not matter, and a purge delivered twice is one invalidation.
 * SSE-SQS and TLS only, as the regeneration queues; the DLQ keeps letters 14 days.
 */
export function createPurgeQueues(
  scope: Construct,
  options: { readonly purgerTimeout: Duration; readonly maxReceiveCount: number },
): PurgeQueues {
  const purgeDeadLetterQueue = new Queue(scope, 'PurgeDeadLetterQueue', {
    ...SECURED,
    retentionPeriod: DEAD_LETTER_RETENTION,
  });
  const purgeQueue = new Queue(scope, 'PurgeQueue', {
    ...SECURED,
    retentionPeriod: RETENTION,
    visibilityTimeout: Duration.seconds(
      options.purgerTimeout.toSeconds() * VISIBILITY_TIMEOUT_FACTOR,
    ),
    deadLetterQueue: { queue: purgeDeadLetterQueue, maxReceiveCount: options.maxReceiveCount },
  });
  return { purgeQueue, purgeDeadLetterQueue };
}

/**
 * Purgers at once at most (an SQS event source takes no fewer): CloudFront's 3,000 invalidation
 * items in progress are shared by every invalidation of the distribution.
 */
export const PURGER_MAX_CONCURRENCY = 2;

/**
 * The purger consumes the purge queue in large batches gathered over a short window, so one
 * CloudFront invalidation carries many pages, reporting failures per record.
 */
export function consumePurgeQueue(
  purger: IFunction,
  queue: Queue,
  options: { readonly purgeBatchSize: number; readonly purgeBatchWindow: Duration },
): void {
  purger.addEventSource(
    new SqsEventSource(queue, {
      batchSize: options.purgeBatchSize,
      maxBatchingWindow: options.purgeBatchWindow,
      maxConcurrency: PURGER_MAX_CONCURRENCY,
      reportBatchItemFailures: true,
    }),
  );
}
