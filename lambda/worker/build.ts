import { RequestRowStore } from '../adapters/request-store/dynamodb.js';
import { SqsDeadLetterQueue } from '../adapters/dead-letter-queue/sqs.js';
import type { LogSink } from '../core/log.js';
import type { WorkerConfig } from '../shared/config.js';
import { createObservability } from '../shared/observability.js';
import { createRegenerateDeps, type ServiceRuntime } from '../shared/service.js';
import { createWorkerHandler } from './handler.js';
import { createIdempotencyConfig } from '../core/idempotency.js';
import type { WorkerDeps } from '../core/regenerate/process-message.js';

/** The worker's use-case dependencies, from validated configuration and injected clients. */
export function createWorkerDeps(
  config: WorkerConfig,
  runtime: ServiceRuntime,
  log: LogSink,
): WorkerDeps {
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
  };
}

/** Builds the worker handler from validated configuration and injected clients. */
export function buildWorkerHandler(
  config: WorkerConfig,
  runtime: ServiceRuntime & { observability?: ReturnType<typeof createObservability> },
) {
  const { logger, metrics } = runtime.observability ?? createObservability('worker');
  return createWorkerHandler({
    deps: createWorkerDeps(config, runtime, logger),
    deadLetters: new SqsDeadLetterQueue({ client: runtime.clients.sqs, queueUrl: config.dlqUrl }),
    logger,
    metrics,
  });
}
