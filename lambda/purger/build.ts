import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SqsDeadLetterQueue } from '../adapters/dead-letter-queue/sqs.js';
import type { PurgeLog } from '../adapters/cdn-invalidator/cloudfront.js';
import type { CdnInvalidator } from '../core/page/ports.js';
import type { PurgerDeps } from '../core/revalidate/process-purges.js';
import { cdnNotConfigured, cloudFrontInvalidatorOf } from '../shared/cdn.js';
import type { PurgerConfig } from '../shared/config.js';
import { observabilityOf, type Observed } from '../shared/observability.js';
import { createPurgerHandler } from './handler.js';

/**
 * What the purger is built from besides its configuration: DynamoDB (pending purges) and SQS
 * (its DLQ) only, so its bundle carries no S3 client; tests and `npm start` inject the CDN.
 */
export interface PurgerRuntime extends Observed {
  readonly clients: { readonly dynamodb: DynamoDBClient; readonly sqs: SQSClient };
  /** @default CloudFront when a distribution is configured, else purges answer `not-configured` */
  readonly cdn?: CdnInvalidator | undefined;
}

/** The purger's use-case dependencies, from validated configuration and injected clients. */
export function createPurgerDeps(
  config: PurgerConfig,
  runtime: PurgerRuntime,
  logger?: PurgeLog,
): PurgerDeps {
  const cloudFront = cloudFrontInvalidatorOf({
    distributionId: config.cdnDistributionId,
    dynamodb: runtime.clients.dynamodb,
    tableName: config.tableName,
    logger,
  });
  return {
    cdn: runtime.cdn ?? cloudFront ?? cdnNotConfigured,
    maxReceiveCount: config.maxReceiveCount,
  };
}

/** Builds the purger handler from validated configuration and injected clients. */
export function buildPurgerHandler(config: PurgerConfig, runtime: PurgerRuntime) {
  const { logger, metrics } = observabilityOf(runtime, 'purger');
  return createPurgerHandler({
    deps: createPurgerDeps(config, runtime, logger),
    // A standard queue's DLQ is standard too: no group, no dedupe ID.
    deadLetters: new SqsDeadLetterQueue({
      client: runtime.clients.sqs,
      queueUrl: config.purgeDlqUrl,
      fifo: false,
    }),
    logger,
    metrics,
  });
}
