import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { DeadLetterQueue } from '../core/page/ports.js';
import {
  processPurges,
  type PurgeReport,
  type PurgerDeps,
  type PurgerMessage,
} from '../core/revalidate/process-purges.js';
import { MetricUnit, publishMetrics } from '../shared/observability.js';
import { queuedMessageOf } from '../shared/sqs-record.js';

export interface PurgerHandlerOptions {
  readonly deps: PurgerDeps;
  readonly deadLetters: DeadLetterQueue;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** SQS record -> the purger's message. */
export const toPurgerMessage = (record: SQSRecord): PurgerMessage => queuedMessageOf(record);

/** The metric each outcome counts towards. */
const METRICS: Record<PurgeReport['outcome'], string> = {
  submitted: 'CdnPurgesSubmitted',
  pending: 'CdnPurgesPending',
  'not-configured': 'CdnPurgesNotConfigured',
  poison: 'PoisonMessages',
  refused: 'CdnPurgesRefused',
  retry: 'RetryableFailures',
};

/**
 * The purger Lambda, on the purge queue's batches (up to `purgeBatchSize`, gathered for up to
 * `purgeBatchWindow`): `processPurges` purges the batch; each message is then acknowledged,
 * retried (a partial batch response) or sent to the purge DLQ with its reason and acknowledged.
 */
export function createPurgerHandler(options: PurgerHandlerOptions) {
  const { deps, deadLetters, logger, metrics } = options;
  return middy(async (event: SQSEvent, _context: Context): Promise<SQSBatchResponse> => {
    const messages = event.Records.map(toPurgerMessage);
    const reports = await processPurges(deps, messages);
    const failed = await Promise.all(
      reports.map(async (report, index): Promise<string[]> => {
        metrics.addMetric(METRICS[report.outcome], MetricUnit.Count, 1);
        const { action, ...fields } = report;
        if (action === 'ack') return [];
        if (action === 'retry') {
          logger.warn('cdn purge will be retried', { ...fields, action });
          return [report.messageId];
        }
        logger.error('cdn purge dead-lettered', { ...fields, action });
        const message = messages[index];
        try {
          await deadLetters.send({ ...message, groupId: undefined, reason: report.reason });
          metrics.addMetric('DeadLettered', MetricUnit.Count, 1);
          return [];
        } catch (error) {
          logger.error('cdn purge could not be dead-lettered', { ...fields, error });
          return [report.messageId];
        }
      }),
    );
    logger.info('cdn purge batch', summaryOf(reports));
    return { batchItemFailures: failed.flat().map((itemIdentifier) => ({ itemIdentifier })) };
  })
    .use(injectLambdaContext(logger))
    .use(publishMetrics(metrics));
}

/** One log line per batch: how many messages, effects and tags, and what became of them. */
function summaryOf(reports: readonly PurgeReport[]) {
  const outcomes: Record<string, number> = {};
  for (const report of reports) outcomes[report.outcome] = (outcomes[report.outcome] ?? 0) + 1;
  const invalidationIds = new Set(
    reports.flatMap((report) => (report.action === 'ack' ? (report.invalidationIds ?? []) : [])),
  );
  return {
    messages: reports.length,
    effects: new Set(reports.map((report) => report.effectId).filter(Boolean)).size,
    tags: reports.reduce((sum, report) => sum + report.tags, 0),
    outcomes,
    invalidationIds: [...invalidationIds],
  };
}
