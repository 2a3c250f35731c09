/**
 * The CDN purger a function uses, built once from its environment (`cdn-env.ts`): CloudFront when
 * `ISR_CDN_DISTRIBUTION_ID` is set, with pending purges kept in the cache table; otherwise purges
 * answer 'not-configured' (a stack fronted by another CDN, the local tools).
 */
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CloudFrontInvalidator, type PurgeLog } from '../adapters/cdn/cloudfront-invalidator.js';
import { DynamoPendingPurges } from '../adapters/dynamodb/pending-purges.js';
import { retryPendingPurges } from '../core/cdn-purge.js';
import type { Clock } from '../core/clock.js';
import type { CdnInvalidator } from '../core/ports.js';
import { cdnDistributionIdOf } from './cdn-env.js';

/** Purges when no CDN is configured: nothing to invalidate, and the receipt says so. */
export const cdnNotConfigured: CdnInvalidator = {
  invalidateTags: () => Promise.resolve({ status: 'not-configured' }),
};

export interface CdnFromEnvOptions {
  readonly env: Record<string, string | undefined>;
  /** The cache table's client and name: pending purges are rows of it. */
  readonly dynamodb: DynamoDBClient;
  readonly tableName: string;
  readonly logger?: PurgeLog | undefined;
  /** @default a client with the function's own region and credentials */
  readonly cloudfront?: CloudFrontClient | undefined;
}

/**
 * The CloudFront invalidator of the configured distribution (also what a sweeper passes to
 * `retryPendingPurges`), or undefined when none is configured.
 */
export function cloudFrontInvalidatorFromEnv(
  options: CdnFromEnvOptions,
): CloudFrontInvalidator | undefined {
  const distributionId = cdnDistributionIdOf(options.env);
  if (distributionId === undefined) return undefined;
  return new CloudFrontInvalidator({
    client: options.cloudfront ?? new CloudFrontClient({}),
    distributionId,
    pending: new DynamoPendingPurges({ client: options.dynamodb, tableName: options.tableName }),
    logger: options.logger,
  });
}

/**
 * What the sweeper runs each time to submit purges CloudFront refused while throttled: the
 * oldest pending ones, under their original identity. Undefined when no CDN is configured.
 * @returns a flush that resolves with how many purges CloudFront accepted
 */
export function pendingPurgeFlusher(
  options: CdnFromEnvOptions & { readonly clock: Clock },
): (() => Promise<number>) | undefined {
  const cdn = cloudFrontInvalidatorFromEnv(options);
  if (cdn === undefined) return undefined;
  const pending = new DynamoPendingPurges({
    client: options.dynamodb,
    tableName: options.tableName,
  });
  return async () => {
    const sweep = await retryPendingPurges({ pending, cdn, clock: options.clock });
    return sweep.submitted.length;
  };
}
