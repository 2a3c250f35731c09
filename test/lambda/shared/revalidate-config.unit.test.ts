import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../../lambda/core/errors.js';
import { loadRevalidateConfig } from '../../../lambda/shared/config.js';

const base = {
  FACETHEORY_CACHE_TABLE_NAME: 'cache',
  ISR_BODY_BUCKET: 'bodies',
  ISR_QUEUE_URL: 'http://localhost/q/queue.fifo',
};
const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:webhook-AbCdEf';

const messageOf = (env: Record<string, string>): string => {
  try {
    loadRevalidateConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('loadRevalidateConfig', () => {
  it('applies the documented limits, and IAM mode without a key', () => {
    expect(loadRevalidateConfig(base)).toMatchObject({
      queueUrl: base.ISR_QUEUE_URL,
      revalidateMaxPaths: 100,
      revalidateMaxTags: 100,
      revalidateSkewSeconds: 300,
      revalidateKeyTtlSeconds: 7 * 86_400,
      revalidateSecretArn: undefined,
      cdnDistributionId: undefined,
    });
  });

  it('reads the webhook key by ARN, and the distribution', () => {
    const config = loadRevalidateConfig({
      ...base,
      ISR_REVALIDATE_SECRET_ARN: secretArn,
      ISR_CDN_DISTRIBUTION_ID: 'E2ABC',
    });
    expect(config.revalidateSecretArn).toBe(secretArn);
    expect(config.cdnDistributionId).toBe('E2ABC');
  });

  it('names the variable that is missing or out of bounds', () => {
    expect(messageOf({ ...base, ISR_QUEUE_URL: '' })).toMatch(/ISR_QUEUE_URL/);
    expect(messageOf({ ...base, ISR_REVALIDATE_SECRET_ARN: 'webhook' })).toMatch(
      /ISR_REVALIDATE_SECRET_ARN must be a Secrets Manager secret ARN/,
    );
    expect(messageOf({ ...base, ISR_REVALIDATE_MAX_PATHS: '0' })).toMatch(
      /ISR_REVALIDATE_MAX_PATHS must be an integer 1\.\.1000/,
    );
    expect(messageOf({ ...base, ISR_REVALIDATE_SKEW_SECONDS: '86400' })).toMatch(
      /ISR_REVALIDATE_SKEW_SECONDS must be an integer 1\.\.3600/,
    );
  });

  it('applies the origin tenancy rules: a tenant list needs the tenant header', () => {
    expect(messageOf({ ...base, ISR_TENANTS: 'a,b' })).toMatch(
      /ISR_TENANTS needs ISR_TENANT_HEADER/,
    );
    const config = loadRevalidateConfig({
      ...base,
      ISR_TENANT_HEADER: 'x-isr-tenant',
      ISR_TENANTS: 'a,b',
    });
    expect(config.tenants).toEqual(['a', 'b']);
  });
});
