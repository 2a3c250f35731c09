import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { CloudFrontInvalidator } from '../../../lambda/adapters/cdn-invalidator/cloudfront.js';
import { ConfigError } from '../../../lambda/core/errors.js';
import { cdnNotConfigured, cloudFrontInvalidatorOf } from '../../../lambda/shared/cdn.js';
import { CDN_DISTRIBUTION_ID_ENV, cdnDistributionIdOf } from '../../../lambda/shared/cdn-env.js';

const clients = {
  dynamodb: new DynamoDBClient({ region: 'us-east-1' }),
  cloudfront: new CloudFrontClient({ region: 'us-east-1' }),
  tableName: 'cache',
};

describe('CDN configuration from the environment', () => {
  it('reads the distribution id from ISR_CDN_DISTRIBUTION_ID', () => {
    expect(CDN_DISTRIBUTION_ID_ENV).toBe('ISR_CDN_DISTRIBUTION_ID');
    expect(cdnDistributionIdOf({ ISR_CDN_DISTRIBUTION_ID: ' E2QWRUHAPOMQZL ' })).toBe(
      'E2QWRUHAPOMQZL',
    );
    expect(cdnDistributionIdOf({})).toBeUndefined();
    expect(cdnDistributionIdOf({ ISR_CDN_DISTRIBUTION_ID: '' })).toBeUndefined();
  });

  it('fails at cold start on a value that is not a distribution id', () => {
    expect(() =>
      cdnDistributionIdOf({ ISR_CDN_DISTRIBUTION_ID: 'arn:aws:cloudfront::1:x' }),
    ).toThrow(ConfigError);
  });

  it('builds the CloudFront invalidator only when a distribution is configured', async () => {
    expect(cloudFrontInvalidatorOf({ distributionId: undefined, ...clients })).toBeUndefined();
    expect(cloudFrontInvalidatorOf({ distributionId: 'E1', ...clients })).toBeInstanceOf(
      CloudFrontInvalidator,
    );
    await expect(cdnNotConfigured.invalidateTags(['_/a'])).resolves.toEqual({
      status: 'not-configured',
    });
  });
});
