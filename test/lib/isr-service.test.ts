// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import { bodyKeyOf, SupersededTag } from '../../lambda/core/page/rows.js';
import {
  getAtt,
  logicalIdOf,
  resourceOf,
  serviceIds,
  synthIsrStack,
  type LambdaProperties,
} from './stack-fixture.js';

describe('IsrService storage and wiring', () => {
  const { template, service } = synthIsrStack();
  const ids = serviceIds(service);

  describe('cache table', () => {
    it('has the FaceTheory keys and TTL, on demand, with point-in-time recovery', () => {
      template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
      template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: Match.arrayWith([
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ]),
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
        Replicas: [
          Match.objectLike({
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
            DeletionProtectionEnabled: true,
          }),
        ],
      });
    });

    it('is retained when it leaves the stack', () => {
      template.hasResource('AWS::DynamoDB::GlobalTable', {
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    });

    it('follows an explicit removal policy', () => {
      const { template: destroyable } = synthIsrStack({
        service: { removalPolicy: RemovalPolicy.DESTROY },
      });
      destroyable.hasResource('AWS::DynamoDB::GlobalTable', {
        DeletionPolicy: 'Delete',
        Properties: { Replicas: [Match.objectLike({ DeletionProtectionEnabled: false })] },
      });
      destroyable.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete' });
    });
  });

  describe('body bucket', () => {
    it('blocks public access, encrypts with S3-managed keys and is retained', () => {
      template.hasResource('AWS::S3::Bucket', {
        DeletionPolicy: 'Retain',
        Properties: Match.objectLike({
          PublicAccessBlockConfiguration: {
            BlockPublicAcls: true,
            BlockPublicPolicy: true,
            IgnorePublicAcls: true,
            RestrictPublicBuckets: true,
          },
          BucketEncryption: {
            ServerSideEncryptionConfiguration: [
              { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
            ],
          },
        }),
      });
    });

    it('denies every request that is not TLS 1.2+', () => {
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: ids.bucket },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Principal: { AWS: '*' },
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
            Match.objectLike({
              Effect: 'Deny',
              Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
            }),
          ]),
        },
      });
    });

    it('is versioned and expires a retired body N days after its delete, not after its creation', () => {
      template.hasResourceProperties('AWS::S3::Bucket', {
        VersioningConfiguration: { Status: 'Enabled' },
        LifecycleConfiguration: {
          Rules: [
            {
              Id: 'ExpireRetiredBodies',
              Status: 'Enabled',
              Prefix: 'pages/',
              NoncurrentVersionExpiration: { NoncurrentDays: 7 },
            },
            {
              Id: 'RemoveExpiredDeleteMarkers',
              Status: 'Enabled',
              ExpiredObjectDeleteMarker: true,
            },
            {
              Id: 'ExpireSupersededBodies',
              Status: 'Enabled',
              Prefix: 'pages/',
              TagFilters: [{ Key: 'isr-state', Value: 'superseded' }],
              ExpirationInDays: 1,
            },
            {
              Id: 'AbortIncompleteUploads',
              Status: 'Enabled',
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
            },
          ],
        },
      });
      // No rule expires current objects by age: a live or kept body is never expired.
      const [bucket] = Object.values(
        template.findResources('AWS::S3::Bucket', {
          Properties: { VersioningConfiguration: { Status: 'Enabled' } },
        }),
      ) as { Properties: { LifecycleConfiguration: { Rules: Record<string, unknown>[] } } }[];
      const byAge = bucket.Properties.LifecycleConfiguration.Rules.filter(
        (rule) => rule.ExpirationInDays !== undefined && rule.TagFilters === undefined,
      );
      expect(byAge).toEqual([]);
    });

    it('scopes the retention to the prefix the Lambda code writes bodies under', () => {
      expect(SupersededTag).toEqual({ Key: 'isr-state', Value: 'superseded' });
      const cacheKey = normaliseCacheKey(
        { rawPath: '/a', tenant: 'acme' },
        { allowedQueryParams: [] },
      );
      expect(bodyKeyOf(cacheKey, 'token')).toMatch(/^pages\/acme\//);
      expect(bodyKeyOf({ ...cacheKey, tenant: undefined }, 'token')).toMatch(/^pages\//);
    });

    it('takes the retention from props', () => {
      const { template: custom } = synthIsrStack({ service: { supersededBodyExpirationDays: 2 } });
      custom.hasResourceProperties('AWS::S3::Bucket', {
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 2 } }),
          ]),
        },
      });
    });
  });

  describe('queues', () => {
    it('are FIFO, SQS-encrypted, and the main queue redrives after 5 receives', () => {
      // The regeneration queue and its DLQ, and the purge queue and its DLQ (isr-purger.test.ts).
      template.resourceCountIs('AWS::SQS::Queue', 4);
      template.hasResourceProperties('AWS::SQS::Queue', {
        FifoQueue: true,
        SqsManagedSseEnabled: true,
        ContentBasedDeduplication: false,
        RedrivePolicy: { deadLetterTargetArn: getAtt(ids.dlq, 'Arn'), maxReceiveCount: 5 },
      });
      const dlq = resourceOf(template, ids.dlq);
      expect(dlq.Properties).toMatchObject({ FifoQueue: true, SqsManagedSseEnabled: true });
      expect(dlq.Properties.RedrivePolicy).toBeUndefined();
    });

    it('keep the visibility timeout at least six worker timeouts', () => {
      const queue = resourceOf<{ VisibilityTimeout: number }>(template, ids.queue);
      const worker = resourceOf<LambdaProperties>(template, ids.worker);
      expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(
        6 * worker.Properties.Timeout,
      );
      const { template: slow } = synthIsrStack({
        service: { workerTimeout: Duration.seconds(100), maxReceiveCount: 8 },
      });
      slow.hasResourceProperties('AWS::SQS::Queue', {
        VisibilityTimeout: 600,
        RedrivePolicy: Match.objectLike({ maxReceiveCount: 8 }),
      });
    });

    it('refuse requests without TLS', () => {
      const purges = [service.purgeQueue, service.purgeDeadLetterQueue].map(logicalIdOf);
      for (const queue of [ids.queue, ids.dlq, ...purges]) {
        template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: queue }],
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Effect: 'Deny',
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              }),
            ]),
          },
        });
      }
    });
  });

  describe('worker event source', () => {
    it('consumes the queue in reported partial batches with bounded concurrency', () => {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: getAtt(ids.queue, 'Arn'),
        FunctionName: { Ref: ids.worker },
        BatchSize: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 10 },
      });
    });
  });
});
