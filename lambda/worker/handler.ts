import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { DeadLetterQueue } from '../core/page/ports.js';
import { Decision } from '../core/decision.js';
import { countDecision, MetricUnit, publishMetrics } from '../shared/observability.js';
import { queuedMessageOf } from '../shared/sqs-record.js';
import { processMessage } from '../core/worker/process-message.js';
import type { WorkerDeps, WorkerMessage } from '../core/worker/deps.js';

export interface WorkerHandlerOptions {
  readonly deps: WorkerDeps;
  readonly deadLetters: DeadLetterQueue;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** SQS record -> the worker's message. */
export const toWorkerMessage = (record: SQSRecord): WorkerMessage => ({
  ...queuedMessageOf(record),
  groupId: record.attributes.MessageGroupId,
});

/**
 * The worker Lambda: each SQS record goes through `processMessage`; its report decides whether
 * the record is acknowledged, retried (reported in `batchItemFailures`), or sent to the DLQ with
 * its reason and then acknowledged. Records of a batch run concurrently: each is idempotent and
 * lease-guarded, so their order does not matter.
 */
export function createWorkerHandler(options: WorkerHandlerOptions) {
  const { deps, deadLetters, logger, metrics } = options;

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    const started = performance.now();
    const message = toWorkerMessage(record);
    const report = await processMessage(deps, message);
    const durationMs = Math.round(performance.now() - started);
    countDecision(metrics, report.decision);
    metrics.addMetric('RegenerationDuration', MetricUnit.Milliseconds, durationMs);
    const fields = {
      decision: report.decision,
      action: report.action,
      idempotencyKey: report.idempotencyKey,
      cacheKeyHash: report.cacheKeyHash,
      receiveCount: message.receiveCount,
      durationMs,
      ...report.detail,
    };
    if (report.detail?.broken === true) {
      // Failed `brokenAfter` times in a row: no longer retried on its own (see core/backoff.ts).
      metrics.addMetric('PagesBroken', MetricUnit.Count, 1);
      logger.error('page is broken: its regenerations keep failing', fields);
    }
    if (report.action === 'ack') {
      if (report.decision === Decision.RenderFailed) logger.warn('regeneration failed', fields);
      else logger.info('regeneration intent handled', fields);
      return;
    }
    if (report.action === 'retry') {
      logger.warn('regeneration intent will be retried', { ...fields, error: report.error });
      throw report.error;
    }
    logger.error('regeneration intent dead-lettered', { ...fields, reason: report.reason });
    await deadLetters.send({ ...message, reason: report.reason });
    metrics.addMetric('DeadLettered', MetricUnit.Count, 1);
  };

  return middy(async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    deps.idempotency.config.registerLambdaContext(context);
    // A partial batch response (`ReportBatchItemFailures`): the records that threw are retried,
    // the others deleted. Written out rather than taken from Powertools batch: it is these few
    // lines, and that package was 5.9 KB of the worker's bundle (see the bundle budget test).
    const settled = await Promise.allSettled(event.Records.map(handleRecord));
    return {
      batchItemFailures: event.Records.flatMap((record, index) =>
        settled[index]?.status === 'rejected' ? [{ itemIdentifier: record.messageId }] : [],
      ),
    };
  })
    .use(injectLambdaContext(logger))
    .use(publishMetrics(metrics));
}
