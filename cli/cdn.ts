/**
 * The one place the CLI gets its `CdnInvalidator` (the purge a rollback, hold or release makes).
 * A deployed stack purges its CloudFront distribution with the operator's own credentials (a
 * throttled purge is kept in the table, and the sweeper submits it again); `npm start` has no
 * CDN, so the purge is printed, as the service itself prints it.
 */
import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { LocalCdnInvalidator } from '../lambda/adapters/cdn-invalidator/local.js';
import type { CdnInvalidator } from '../lambda/core/page/ports.js';
import { cdnNotConfigured, cloudFrontInvalidatorOf } from '../lambda/shared/cdn.js';
import type { Target } from './target.js';

export function cdnInvalidatorFor(
  target: Pick<Target, 'kind' | 'clients' | 'tableName' | 'distributionId' | 'region'>,
  print: (line: string) => void = (line) => console.error(line),
): CdnInvalidator {
  if (target.kind === 'local') {
    // Its own ids: npm start numbers its purges local-1, local-2, ...
    return new LocalCdnInvalidator({ print, idPrefix: `local-cli-${process.pid}` });
  }
  const cdn = cloudFrontInvalidatorOf({
    distributionId: target.distributionId,
    dynamodb: target.clients.dynamodb,
    tableName: target.tableName,
    cloudfront: new CloudFrontClient({ region: target.region }),
  });
  return cdn ?? cdnNotConfigured;
}
