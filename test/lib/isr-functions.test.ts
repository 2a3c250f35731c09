// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { loadOriginConfig, loadWorkerConfig } from '../../lambda/shared/config.js';
import {
  logicalIdOf,
  resourceOf,
  serviceIds,
  synthIsrStack,
  type LambdaProperties,
} from './stack-fixture.js';

describe('IsrService functions', () => {
  const { template, service } = synthIsrStack();
  const ids = serviceIds(service);
  const env = (id: string) =>
    resourceOf<LambdaProperties>(template, id).Properties.Environment.Variables;

  it('run on nodejs22.x, arm64', () => {
    template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      { Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' },
      2,
    );
  });

  it('get the shared configuration under the names config.ts reads', () => {
    for (const fn of [ids.origin, ids.worker]) {
      expect(env(fn)).toMatchObject({
        FACETHEORY_CACHE_TABLE_NAME: { Ref: ids.table },
        ISR_BODY_BUCKET: { Ref: ids.bucket },
        ISR_ALLOWED_QUERY_PARAMS: '',
        ISR_DEPLOY_ID: 'unversioned',
        ISR_LEASE_SECONDS: '30',
        ISR_RENDER_TIMEOUT_MS: '10000',
        ISR_REVALIDATE_SECONDS: '60',
        ISR_MAX_BODY_BYTES: String(4 * 1024 * 1024),
        POWERTOOLS_SERVICE_NAME: fn === ids.origin ? 'isr-origin' : 'isr-worker',
      });
      expect(env(fn)).not.toHaveProperty('ISR_TENANT_HEADER');
      expect(env(fn)).not.toHaveProperty('RENDER_ORIGIN_URL');
    }
  });

  it('get an environment their config loaders accept, meaning what the props say', () => {
    const { template: custom, service: customService } = synthIsrStack({
      service: {
        tenantHeader: 'X-Site',
        allowedQueryParams: ['page'],
        leaseSeconds: 40,
        renderTimeoutMs: 20_000,
        workerTimeout: Duration.seconds(60),
        maxReceiveCount: 7,
        renderOriginUrl: 'https://ssr.example.com',
      },
    });
    const resolved = (id: string) =>
      Object.fromEntries(
        Object.entries(
          resourceOf<LambdaProperties>(custom, id).Properties.Environment.Variables,
        ).map(([name, value]) => [
          name,
          typeof value === 'string'
            ? value
            : name.endsWith('_URL')
              ? `https://sqs.us-east-1.amazonaws.com/123456789012/${name}.fifo`
              : `resolved-${name.toLowerCase()}`,
        ]),
      );
    const origin = loadOriginConfig(resolved(logicalIdOf(customService.originFunction)));
    const worker = loadWorkerConfig(resolved(logicalIdOf(customService.workerFunction)));
    for (const config of [origin, worker]) {
      expect(config).toMatchObject({
        tenantHeader: 'x-site',
        keyPolicy: { allowedQueryParams: ['page'] },
        leaseSeconds: 40,
        renderTimeoutMs: 20_000,
        renderOriginUrl: 'https://ssr.example.com',
      });
    }
    expect(worker.maxReceiveCount).toBe(7);
    custom.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 7 }),
    });
  });

  it('tell the origin its queue, and the worker its DLQ and receive limit', () => {
    expect(env(ids.origin)).toMatchObject({ ISR_QUEUE_URL: { Ref: ids.queue } });
    expect(env(ids.origin)).not.toHaveProperty('ISR_DLQ_URL');
    expect(env(ids.worker)).toMatchObject({
      ISR_DLQ_URL: { Ref: ids.dlq },
      ISR_MAX_RECEIVE_COUNT: '5',
    });
    expect(env(ids.worker)).not.toHaveProperty('ISR_QUEUE_URL');
  });
});
