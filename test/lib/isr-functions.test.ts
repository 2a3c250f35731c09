// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { Duration, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { loadOriginConfig, loadWorkerConfig } from '../../lambda/shared/config.js';
import { functionEnvironment } from '../../lib/isr-functions.js';
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

  it('run on nodejs22.x, arm64 (origin, worker, sweeper, revalidate, purger)', () => {
    template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      { Runtime: 'nodejs22.x', Architectures: ['arm64'], Handler: 'index.handler' },
      5, // origin, worker, sweeper, revalidate, purger
    );
  });

  it('get the shared configuration under the names config.ts reads', () => {
    for (const fn of [ids.origin, ids.worker]) {
      expect(env(fn)).toMatchObject({
        FACETHEORY_CACHE_TABLE_NAME: { Ref: ids.table },
        ISR_BODY_BUCKET: { Ref: ids.bucket },
        ISR_ALLOWED_QUERY_PARAMS: '[]', // lists travel as JSON: any item round-trips
        ISR_DEPLOY_ID: 'unversioned',
        ISR_LEASE_SECONDS: '30',
        ISR_RENDER_TIMEOUT_MS: '10000',
        ISR_REVALIDATE_SECONDS: '60',
        ISR_MAX_BODY_BYTES: String(4 * 1024 * 1024),
        ISR_CLOCK_SKEW_MARGIN_SECONDS: '2',
        ISR_FUNCTION_TIMEOUT_MS: '30000',
        POWERTOOLS_SERVICE_NAME: fn === ids.origin ? 'isr-origin' : 'isr-worker',
      });
      expect(env(fn)).not.toHaveProperty('ISR_TENANT_HEADER');
      expect(env(fn)).not.toHaveProperty('RENDER_ORIGIN_URL');
      expect(env(fn)).not.toHaveProperty('ISR_TENANTS');
      expect(env(fn)).not.toHaveProperty('ISR_UPSTREAM_SECRET_ARN');
    }
  });

  it('get exactly functionEnvironment(...), the environment the settings test feeds to config', () => {
    const refs = {
      tableName: service.table.tableName,
      bucketName: service.bucket.bucketName,
      queueUrl: service.queue.queueUrl,
      deadLetterQueueUrl: service.deadLetterQueue.queueUrl,
      purgeQueueUrl: service.purgeQueue.queueUrl,
      purgeDeadLetterQueueUrl: service.purgeDeadLetterQueue.queueUrl,
    };
    for (const [kind, id] of [
      ['origin', ids.origin],
      ['worker', ids.worker],
    ] as const) {
      expect(env(id)).toEqual(
        Stack.of(service).resolve(functionEnvironment(kind, service.settings, refs)),
      );
    }
  });

  it('tell each function its own timeout, so its cold start checks the timeout rule', () => {
    const { template: slow, service: slowService } = synthIsrStack({
      service: { workerTimeout: Duration.seconds(90), originTimeout: Duration.seconds(20) },
    });
    const timeoutOf = (fn: typeof slowService.originFunction) =>
      resourceOf<LambdaProperties>(slow, logicalIdOf(fn)).Properties.Environment.Variables
        .ISR_FUNCTION_TIMEOUT_MS;
    expect(timeoutOf(slowService.workerFunction)).toBe('90000');
    expect(timeoutOf(slowService.originFunction)).toBe('20000');
  });

  it('reserve concurrency only when asked: the worker bounded by its event source', () => {
    for (const kind of ['isr-origin', 'isr-worker']) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: kind }) },
        ReservedConcurrentExecutions: Match.absent(),
      });
    }
    const { template: sized } = synthIsrStack({
      service: { workerMaxConcurrency: 25, workerReservedConcurrency: 25 },
    });
    sized.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      ScalingConfig: { MaximumConcurrency: 25 },
    });
    sized.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'isr-worker' }) },
      ReservedConcurrentExecutions: 25,
    });
    sized.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'isr-origin' }) },
      ReservedConcurrentExecutions: Match.absent(),
    });
  });

  it('run both functions in the given VPC subnets and security groups', () => {
    const { template: placed, service: placedService } = synthIsrStack({ service: vpcProps() });
    const groups = placed.findResources('AWS::EC2::SecurityGroup');
    expect(Object.keys(groups)).toHaveLength(0);
    for (const fn of [placedService.originFunction, placedService.workerFunction]) {
      expect(
        resourceOf<{ VpcConfig: unknown }>(placed, logicalIdOf(fn)).Properties.VpcConfig,
      ).toEqual({
        SubnetIds: ['subnet-aaaa1111', 'subnet-bbbb2222'],
        SecurityGroupIds: ['sg-0123456789abcdef0'],
      });
    }
  });

  it('pass the tenant allow-list, and the upstream secret by ARN and header only', () => {
    const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf';
    const { template: tenanted, service: tenantedService } = synthIsrStack({
      service: {
        tenantHeader: 'x-tenant',
        tenants: ['acme', 'globex.eu'],
        renderOriginUrl: 'https://ssr.example.com',
        upstreamSecret: Secret.fromSecretCompleteArn(new Stack(), 'Upstream', secretArn),
        upstreamSecretHeader: 'X-Origin-Key',
        clockSkewMarginSeconds: 5,
      },
    });
    for (const fn of [tenantedService.originFunction, tenantedService.workerFunction]) {
      expect(
        resourceOf<LambdaProperties>(tenanted, logicalIdOf(fn)).Properties.Environment.Variables,
      ).toMatchObject({
        ISR_TENANTS: '["acme","globex.eu"]',
        ISR_UPSTREAM_SECRET_ARN: secretArn,
        ISR_UPSTREAM_SECRET_HEADER: 'x-origin-key',
        ISR_CLOCK_SKEW_MARGIN_SECONDS: '5',
      });
      // The value is read through the Parameters and Secrets extension layer, not an SDK client.
      const properties = resourceOf<{
        Layers?: unknown[];
        Environment: { Variables: Record<string, unknown> };
      }>(tenanted, logicalIdOf(fn)).Properties;
      expect(JSON.stringify(properties.Layers)).toMatch(/Paramsandsecretslayer.*arm64/);
      expect(properties.Environment.Variables).toMatchObject({
        PARAMETERS_SECRETS_EXTENSION_CACHE_ENABLED: 'true',
      });
    }
    for (const fn of [service.originFunction, service.workerFunction]) {
      expect(
        resourceOf<{ Layers?: unknown[] }>(template, logicalIdOf(fn)).Properties.Layers,
      ).toBeUndefined();
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
        clockSkewMarginSeconds: 4,
        tenants: ['acme'],
        upstreamSecret: Secret.fromSecretCompleteArn(
          new Stack(),
          'Upstream',
          'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf',
        ),
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
              : name.endsWith('_ARN')
                ? 'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf'
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
        clockSkewMarginSeconds: 4,
        renderTimeoutMs: 20_000,
        renderOriginUrl: 'https://ssr.example.com',
        tenants: ['acme'],
        upstreamSecret: { header: 'x-isr-origin-secret' },
      });
    }
    expect(worker.functionTimeoutMs).toBe(60_000);
    expect(origin.functionTimeoutMs).toBe(30_000);
    expect(worker.maxReceiveCount).toBe(7);
    custom.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 7 }),
    });
  });

  it("tell the origin and the worker their queue (the worker queues a tag's next fan-out step), and the worker its DLQ and receive limit", () => {
    expect(env(ids.origin)).toMatchObject({ ISR_QUEUE_URL: { Ref: ids.queue } });
    expect(env(ids.origin)).not.toHaveProperty('ISR_DLQ_URL');
    expect(env(ids.worker)).toMatchObject({
      ISR_DLQ_URL: { Ref: ids.dlq },
      ISR_MAX_RECEIVE_COUNT: '5',
    });
    expect(env(ids.worker)).toMatchObject({ ISR_QUEUE_URL: { Ref: ids.queue } });
  });
});

/** Both functions in an imported VPC's private subnets, with one given security group. */
function vpcProps() {
  const scratch = new Stack(undefined, 'Network', {
    env: { account: '123456789012', region: 'us-east-1' },
  });
  const vpc = Vpc.fromVpcAttributes(scratch, 'Vpc', {
    vpcId: 'vpc-0123456789abcdef0',
    availabilityZones: ['us-east-1a', 'us-east-1b'],
    privateSubnetIds: ['subnet-aaaa1111', 'subnet-bbbb2222'],
  });
  return {
    vpc,
    vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
    securityGroups: [SecurityGroup.fromSecurityGroupId(scratch, 'Sg', 'sg-0123456789abcdef0')],
  };
}
