import { DynamoFanOutProgressRows } from '../adapters/fan-out-progress-rows/dynamodb.js';
import { SqsRegenerationQueue } from '../adapters/regeneration-queue/sqs.js';
import { DynamoRevalidationMarks } from '../adapters/revalidation-marks/dynamodb.js';
import { DynamoRevalidationStatuses } from '../adapters/revalidation-statuses/dynamodb.js';
import { DynamoRevalidationsInProgress } from '../adapters/revalidations-in-progress/dynamodb.js';
import { DynamoTagRevalidations } from '../adapters/tag-revalidations/dynamodb.js';
import { systemClock } from '../core/clock.js';
import type { FanOutDeps } from '../core/revalidate/fan-out.js';
import { cdnNotConfigured } from '../shared/cdn.js';
import { RequestRowStore } from '../adapters/request-store/dynamodb.js';
import { SqsDeadLetterQueue } from '../adapters/dead-letter-queue/sqs.js';
import type { LogSink } from '../core/log.js';
import type { WorkerConfig } from '../shared/config.js';
import { observabilityOf, type Observed } from '../shared/observability.js';
import { createRegenerateDeps, type ServiceRuntime } from '../shared/service.js';
import { createBudgetDeps } from '../shared/budget.js';
import { softPurgeDepsOf } from '../shared/soft-purge.js';
import { createWorkerHandler } from './handler.js';
import { createIdempotencyConfig } from '../core/idempotency.js';
import type { WorkerDeps } from '../core/worker/deps.js';

/** The worker's use-case dependencies, from validated configuration and injected clients. */
export function createWorkerDeps(
  config: WorkerConfig,
  runtime: ServiceRuntime,
  log: LogSink,
): WorkerDeps {
  const softPurge = softPurgeDepsOf(config.softPurge, runtime.clients.sqs);
  return {
    ...createRegenerateDeps(config, runtime, log),
    keyPolicy: config.keyPolicy,
    idempotency: {
      store: new RequestRowStore({
        client: runtime.clients.dynamodb,
        tableName: config.tableName,
        clock: runtime.clock,
      }),
      config: createIdempotencyConfig(config.idempotencyTtlSeconds),
    },
    maxReceiveCount: config.maxReceiveCount,
    owner: runtime.owner,
    fanOut: { ...createFanOutDeps(config, runtime), softPurge },
    purgeQueue: softPurge?.queue,
    budget: createBudgetDeps(config, runtime.clients),
  };
}

/** What a revalidation's fan-out step needs: the tag index, the marks, the queue, its rows. */
function createFanOutDeps(config: WorkerConfig, runtime: ServiceRuntime): FanOutDeps {
  const tables = { client: runtime.clients.dynamodb, tableName: config.tableName };
  const queue = new SqsRegenerationQueue({
    client: runtime.clients.sqs,
    queueUrl: config.queueUrl,
  });
  return {
    marks: new DynamoRevalidationMarks(tables),
    tagIndex: new DynamoTagRevalidations(tables),
    queue,
    // A step never purges the CDN itself: the revalidation purged it by tag when it was
    // accepted, or (soft purges) the tag's last step queues its deadline purge.
    cdn: cdnNotConfigured,
    clock: runtime.clock ?? systemClock,
    deployId: config.deployId,
    inProgress: new DynamoRevalidationsInProgress(tables),
    shards: config.revalidationShards,
    progress: new DynamoFanOutProgressRows(tables),
    fanOutQueue: queue,
    statuses: new DynamoRevalidationStatuses(tables),
    batchSize: config.fanOutBatchSize,
    fanOutConcurrency: config.fanOutConcurrency,
    inProgressCacheMs: 0,
  };
}

/** Builds the worker handler from validated configuration and injected clients. */
export function buildWorkerHandler(config: WorkerConfig, runtime: ServiceRuntime & Observed) {
  const { logger, metrics } = observabilityOf(runtime, 'worker');
  return createWorkerHandler({
    deps: createWorkerDeps(config, runtime, logger),
    deadLetters: new SqsDeadLetterQueue({ client: runtime.clients.sqs, queueUrl: config.dlqUrl }),
    logger,
    metrics,
  });
}
