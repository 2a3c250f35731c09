import { describe, expect, it } from '@jest/globals';
import { Duration, Stack } from 'aws-cdk-lib';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IsrServiceProps } from '../../lib/isr-service-props.js';
import { IsrServiceConfigError, resolveSettings } from '../../lib/isr-settings.js';
import { synthIsrStack } from './stack-fixture.js';

const refusal = (props: IsrServiceProps): string => {
  try {
    resolveSettings(props);
  } catch (error) {
    expect(error).toBeInstanceOf(IsrServiceConfigError);
    return (error as Error).message;
  }
  throw new Error('expected the props to be refused');
};

describe('IsrService settings', () => {
  it('applies secure, consistent defaults', () => {
    expect(resolveSettings({})).toMatchObject({
      allowedQueryParams: [],
      tenantHeader: undefined,
      deployId: 'unversioned',
      leaseSeconds: 30,
      renderTimeoutMs: 10_000,
      maxReceiveCount: 5,
      workerBatchSize: 10,
      supersededBodyExpirationDays: 7,
      removalPolicy: 'retain',
      clockSkewMarginSeconds: 2,
      maxBodyBytes: 4 * 1024 * 1024,
      workerReservedConcurrency: undefined,
      originReservedConcurrency: undefined,
      revalidateReservedConcurrency: undefined,
      sweeperReservedConcurrency: undefined,
      accountConcurrencyLimit: 1_000,
      rateLimitPerFiveMinutes: undefined,
    });
  });

  it('refuses a lease the default clock-skew margin leaves nothing of (the cold start would)', () => {
    expect(refusal({ leaseSeconds: 2, renderTimeoutMs: 1_000 })).toMatch(
      /clockSkewMarginSeconds \(2 s\) must be below the lease \(leaseSeconds=2\)/,
    );
  });

  it('reserves concurrency when asked, the worker at least what its event source uses', () => {
    expect(resolveSettings({ workerMaxConcurrency: 40 }).workerReservedConcurrency).toBeUndefined();
    expect(
      resolveSettings({ workerMaxConcurrency: 40, workerReservedConcurrency: 40 })
        .workerReservedConcurrency,
    ).toBe(40);
    expect(refusal({ workerMaxConcurrency: 40, workerReservedConcurrency: 20 })).toMatch(
      /workerReservedConcurrency \(20\) must be at least workerMaxConcurrency \(40\)/,
    );
    const none = resolveSettings({ workerReservedConcurrency: 0, originReservedConcurrency: 0 });
    expect(none).toMatchObject({
      workerReservedConcurrency: undefined,
      originReservedConcurrency: undefined,
    });
    expect(refusal({ originReservedConcurrency: -1 })).toMatch(/originReservedConcurrency/);
  });

  it('refuses a rate limit together with a web ACL of its own, and limits WAF would refuse', () => {
    expect(
      refusal({
        rateLimitPerFiveMinutes: 1000,
        webAclId: 'arn:aws:wafv2:us-east-1:1:global/webacl/x/y',
      }),
    ).toMatch(/cannot be combined with webAclId/);
    expect(refusal({ rateLimitPerFiveMinutes: 5 })).toMatch(
      /rateLimitPerFiveMinutes must be an integer 10\.\./,
    );
  });

  it('refuses network and secret props that cannot take effect', () => {
    const scratch = new Stack();
    const vpc = new Vpc(scratch, 'Vpc');
    expect(refusal({ securityGroups: [] })).toMatch(/need vpc/);
    expect(() => resolveSettings({ vpc })).not.toThrow();
    expect(refusal({ upstreamSecretHeader: 'x-key' })).toMatch(
      /upstreamSecretHeader needs upstreamSecret/,
    );
    const byName = Secret.fromSecretNameV2(scratch, 'ByName', 'upstream');
    expect(refusal({ renderOriginUrl: 'https://ssr.example.com', upstreamSecret: byName })).toMatch(
      /complete ARN/,
    );
  });

  it('takes CloudFront logs to exactly one destination', () => {
    const scratch = new Stack();
    const logGroup = new LogGroup(scratch, 'Logs');
    const bucket = new Bucket(scratch, 'Bucket');
    expect(refusal({ cdnLogs: {} })).toMatch(/exactly one of logGroup or bucket/);
    expect(refusal({ cdnLogs: { logGroup, bucket } })).toMatch(/exactly one/);
    expect(() => resolveSettings({ cdnLogs: { logGroup } })).not.toThrow();
  });

  it('refuses a render that could outlive its lease', () => {
    expect(refusal({ leaseSeconds: 10, renderTimeoutMs: 10_000 })).toMatch(
      /renderTimeoutMs \(10000 ms\) must be below the lease \(leaseSeconds=10/,
    );
    expect(() => resolveSettings({ leaseSeconds: 11, renderTimeoutMs: 10_000 })).not.toThrow();
  });

  it('refuses function timeouts with no room for a render and its publish', () => {
    expect(refusal({ originTimeout: Duration.seconds(12) })).toMatch(
      /originTimeout \(12000 ms\) must leave room for a render/,
    );
    expect(refusal({ workerTimeout: Duration.seconds(10) })).toMatch(/workerTimeout/);
    expect(
      refusal({ renderTimeoutMs: 40_000, leaseSeconds: 60, workerTimeout: Duration.seconds(60) }),
    ).toMatch(/originTimeout/);
  });

  it('refuses a redrive under 5 receives and FIFO batches over 10', () => {
    expect(refusal({ maxReceiveCount: 4 })).toMatch(/maxReceiveCount must be an integer 5\.\.1000/);
    expect(refusal({ workerBatchSize: 11 })).toMatch(/workerBatchSize/);
    expect(refusal({ workerMaxConcurrency: 1 })).toMatch(/workerMaxConcurrency/);
  });

  it('refuses bodies a function URL response could not carry', () => {
    expect(refusal({ maxBodyBytes: 5 * 1024 * 1024 })).toMatch(/maxBodyBytes/);
  });

  it('refuses tenant headers and query names that would break the cache key', () => {
    expect(refusal({ tenantHeader: 'Host' })).toMatch(/tenantHeader/);
    expect(refusal({ tenantHeader: 'x tenant' })).toMatch(/tenantHeader/);
    expect(refusal({ allowedQueryParams: ['a,b'] })).toMatch(/allowedQueryParams/);
    expect(refusal({ renderOriginUrl: 'ftp://example.com' })).toMatch(/renderOriginUrl/);
    expect(refusal({ renderOriginUrl: 'http://ssr.example.com' })).toMatch(
      /renderOriginUrl must be https/,
    );
    expect(refusal({ tenants: ['acme'] })).toMatch(/tenants needs tenantHeader/);
  });

  it("refuses settings that would not fit a function's 4 KB environment (the deploy would fail)", () => {
    const paths = (count: number) => Array.from({ length: count }, (_, n) => `/section-${n}/**`);
    expect(() => resolveSettings({ renderPaths: paths(60) })).not.toThrow();
    expect(refusal({ renderPaths: paths(200) })).toMatch(
      /the origin function's settings take about \d+ bytes of environment.*ISR_RENDER_PATHS/,
    );
  });

  it('fails the synth, not the deploy, on a bad combination', () => {
    expect(() => synthIsrStack({ context: { allowedQueryParams: 'page, bad name' } })).toThrow(
      IsrServiceConfigError,
    );
  });
});
