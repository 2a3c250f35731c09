import { describe, expect, it } from '@jest/globals';
import { Duration } from 'aws-cdk-lib';
import type { IsrServiceProps } from '../../lib/isr-service.js';
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
    });
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
  });

  it('fails the synth, not the deploy, on a bad combination', () => {
    expect(() => synthIsrStack({ context: { allowedQueryParams: 'page, bad name' } })).toThrow(
      IsrServiceConfigError,
    );
  });
});
