import { DynamoFanOutProgressRows } from '../adapters/fan-out-progress-rows/dynamodb.js';
import { DynamoFanOutStarts } from '../adapters/fan-out-starts/dynamodb.js';
import { DynamoRevalidationsInProgress } from '../adapters/revalidations-in-progress/dynamodb.js';
import { RequestRowStore } from '../adapters/request-store/dynamodb.js';
import { DynamoRevalidationMarks } from '../adapters/revalidation-marks/dynamodb.js';
import {
  DynamoTagRevalidations,
  TAG_STATE_TTL_SECONDS,
} from '../adapters/tag-revalidations/dynamodb.js';
import { ExtensionSecretSource } from '../adapters/secret-source/extension.js';
import { DynamoRevalidationStatuses } from '../adapters/revalidation-statuses/dynamodb.js';
import { SqsRegenerationQueue } from '../adapters/regeneration-queue/sqs.js';
import { systemClock } from '../core/clock.js';
import type { PurgeLog } from '../adapters/cdn-invalidator/cloudfront.js';
import type { CdnInvalidator } from '../core/page/ports.js';
import { cdnNotConfigured, cloudFrontInvalidatorOf } from '../shared/cdn.js';
import type { RevalidateConfig } from '../shared/config.js';
import { createIdempotencyConfig } from '../core/idempotency.js';
import { observabilityOf, type Observed } from '../shared/observability.js';
import type { ServiceRuntime } from '../shared/service.js';
import { softPurgeDepsOf } from '../shared/soft-purge.js';
import { createRevalidateHandler } from './handler.js';
import type { CallerAuth, RevalidateServiceDeps } from '../core/revalidate/serve-revalidation.js';

/**
 * The one place a revalidation's CDN purger is chosen: the injected one (local mode, tests),
 * else CloudFront when a distribution is configured, else none, and receipts say
 * `not-configured`.
 */
export function createCdnInvalidator(
  config: RevalidateConfig,
  runtime: Pick<ServiceRuntime, 'cdn' | 'clients'>,
  logger?: PurgeLog,
): CdnInvalidator {
  if (runtime.cdn !== undefined) return runtime.cdn;
  const cloudFront = cloudFrontInvalidatorOf({
    distributionId: config.cdnDistributionId,
    dynamodb: runtime.clients.dynamodb,
    tableName: config.tableName,
    logger,
  });
  return cloudFront ?? cdnNotConfigured;
}

/** HMAC when a key is configured (as is, or by ARN through the extension); else IAM, or open locally. */
function callerAuth(config: RevalidateConfig, runtime: ServiceRuntime): CallerAuth {
  const skewSeconds = config.revalidateSkewSeconds;
  if (runtime.revalidateSecret !== undefined) {
    return { kind: 'hmac', secret: runtime.revalidateSecret, skewSeconds };
  }
  if (config.revalidateSecretArn !== undefined) {
    const secret = new ExtensionSecretSource({
      secretId: config.revalidateSecretArn,
      sessionToken: runtime.sessionToken ?? (() => undefined),
    });
    return { kind: 'hmac', secret, skewSeconds };
  }
  return runtime.revalidateOpen === true ? { kind: 'open' } : { kind: 'iam' };
}

/** The revalidate function's dependencies, from validated configuration and injected clients. */
export function createRevalidateDeps(
  config: RevalidateConfig,
  runtime: ServiceRuntime,
  logger?: PurgeLog,
): RevalidateServiceDeps {
  const clock = runtime.clock ?? systemClock;
  const tables = { client: runtime.clients.dynamodb, tableName: config.tableName };
  // One of each for the revalidation, its background marking and the tag-times read.
  const tagRevalidations = new DynamoTagRevalidations({ ...tables, clock });
  const queue = new SqsRegenerationQueue({
    client: runtime.clients.sqs,
    queueUrl: config.queueUrl,
  });
  return {
    revalidation: {
      marks: new DynamoRevalidationMarks(tables),
      tagIndex: tagRevalidations,
      queue,
      cdn: createCdnInvalidator(config, runtime, logger),
      clock,
      deployId: config.deployId,
      fanOutConcurrency: config.fanOutConcurrency,
      softPurge: softPurgeDepsOf(config.softPurge, runtime.clients.sqs),
    },
    background: {
      inProgress: new DynamoRevalidationsInProgress(tables),
      shards: config.revalidationShards,
      progress: new DynamoFanOutProgressRows(tables),
      starts: new DynamoFanOutStarts({ ...tables, ttlSeconds: config.revalidateKeyTtlSeconds }),
      fanOutQueue: queue,
      batchSize: config.fanOutBatchSize,
      inProgressCacheMs: config.inProgressCacheMs,
    },
    tagTimes: {
      reader: tagRevalidations,
      cacheMs: config.inProgressCacheMs,
      skewMarginMs: config.clockSkewMarginSeconds * 1000,
      keptMs: TAG_STATE_TTL_SECONDS * 1000,
    },
    statuses: new DynamoRevalidationStatuses({
      ...tables,
      ttlSeconds: config.revalidateKeyTtlSeconds,
    }),
    policy: {
      keyPolicy: config.keyPolicy,
      tenancy: config.tenantHeader === undefined ? undefined : { tenants: config.tenants },
      maxPaths: config.revalidateMaxPaths,
      maxTags: config.revalidateMaxTags,
    },
    auth: callerAuth(config, runtime),
    idempotency: {
      store: new RequestRowStore({ ...tables, clock: runtime.clock }),
      config: createIdempotencyConfig(config.revalidateKeyTtlSeconds),
    },
    clock,
    retryAfterSeconds: 1,
  };
}

export function buildRevalidateHandler(
  config: RevalidateConfig,
  runtime: ServiceRuntime & Observed,
) {
  const { logger, metrics } = observabilityOf(runtime, 'revalidate');
  return createRevalidateHandler({
    deps: createRevalidateDeps(config, runtime, logger),
    logger,
    metrics,
  });
}
