/**
 * The CDN purger a function uses, built once from its configuration: CloudFront when a
 * distribution is configured (`ISR_CDN_DISTRIBUTION_ID`, read by `config.ts` through
 * `cdn-env.ts`), with pending purges kept in the cache table; otherwise purges answer
 * 'not-configured' (a stack fronted by another CDN, the local tools).
 */
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CloudFrontInvalidator, type PurgeLog } from '../adapters/cdn-invalidator/cloudfront.js';
import { DynamoPendingPurges } from '../adapters/pending-purges/dynamodb.js';
import { retryPendingPurges } from '../core/operate/pending-purges.js';
import type { Clock } from '../core/clock.js';
import type { CdnInvalidator } from '../core/page/ports.js';

/** Purges when no CDN is configured: nothing to invalidate, and the receipt says so. */
export const cdnNotConfigured: CdnInvalidator = {
  invalidateTags: () => Promise.resolve({ status: 'not-configured' }),
};

export interface CdnOptions {
  /** The distribution purged by cache tag; undefined when none is configured. */
  readonly distributionId: string | undefined;
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
export function cloudFrontInvalidatorOf(options: CdnOptions): CloudFrontInvalidator | undefined {
  return cloudFrontPurgingOf(options)?.cdn;
}

/** The invalidator and the store of its pending purges, one of each, or undefined. */
function cloudFrontPurgingOf(options: CdnOptions) {
  const { distributionId } = options;
  if (distributionId === undefined) return undefined;
  const pending = new DynamoPendingPurges({
    client: options.dynamodb,
    tableName: options.tableName,
  });
  const cdn = new CloudFrontInvalidator({
    client: options.cloudfront ?? new CloudFrontClient({}),
    distributionId,
    pending,
    logger: options.logger,
  });
  return { cdn, pending };
}

/**
 * What the sweeper runs each time to submit purges CloudFront refused while throttled: the
 * oldest pending ones, under their original identity. Undefined when no CDN is configured.
 * @returns a flush that resolves with how many purges CloudFront accepted
 */
export function pendingPurgeFlusher(
  options: CdnOptions & { readonly clock: Clock },
): (() => Promise<number>) | undefined {
  const purging = cloudFrontPurgingOf(options);
  if (purging === undefined) return undefined;
  return async () => {
    const sweep = await retryPendingPurges({ ...purging, clock: options.clock });
    return sweep.submitted.length;
  };
}
