import { describe, expect, it, jest } from '@jest/globals';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import {
  AttributeType,
  ProjectionType,
  Table,
  TableEncryptionV2,
  TableV2,
  type TablePropsV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { IsrService, type IsrServiceProps } from '../../lib/isr-service.js';
import {
  allowedActionsOf,
  cdkJsonContext,
  getAtt,
  logicalIdOf,
  policyStatementsOf,
  resourceOf,
  resourcesOf,
  type LambdaProperties,
} from './stack-fixture.js';

/** The FaceTheory cache table as a user might already have it. */
const FACETHEORY_TABLE: TablePropsV2 = {
  partitionKey: { name: 'pk', type: AttributeType.STRING },
  sortKey: { name: 'sk', type: AttributeType.STRING },
  timeToLiveAttribute: 'ttl',
  globalSecondaryIndexes: [
    {
      indexName: 'status-index',
      partitionKey: { name: 'status_shard', type: AttributeType.STRING },
      sortKey: { name: 'status_at', type: AttributeType.NUMBER },
      projectionType: ProjectionType.ALL,
    },
  ],
  removalPolicy: RemovalPolicy.DESTROY,
};

/** A stack with the user's resources, made by `own`, and the service given them. */
function synthWith(own: (stack: Stack) => IsrServiceProps) {
  const app = new App({ context: cdkJsonContext() });
  // A region: a TableV2 with a customer managed key cannot be region-agnostic.
  const stack = new Stack(app, 'Site', { env: { account: '123456789012', region: 'us-east-1' } });
  const props = own(stack);
  const service = new IsrService(stack, 'Isr', props);
  return { stack, service, props, template: () => Template.fromStack(stack) };
}

const versionedBucket = (stack: Stack) => new Bucket(stack, 'Pages', { versioned: true });

describe("IsrService with the user's table and bucket", () => {
  const {
    stack,
    service,
    props,
    template: synth,
  } = synthWith((s) => ({
    table: new TableV2(s, 'Cache', FACETHEORY_TABLE),
    bucket: versionedBucket(s),
  }));
  const template = synth();

  it('creates neither a table nor a bucket, and points every function at the given ones', () => {
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    template.resourceCountIs('AWS::S3::Bucket', 1);
    expect(service.table).toBe(props.table);
    expect(service.bucket).toBe(props.bucket);
    for (const fn of [service.originFunction, service.workerFunction, service.sweeperFunction]) {
      const variables = resourceOf<LambdaProperties>(template, logicalIdOf(fn)).Properties
        .Environment.Variables;
      expect(variables.FACETHEORY_CACHE_TABLE_NAME).toEqual({ Ref: logicalIdOf(props.table!) });
      expect(variables.ISR_BODY_BUCKET).toEqual({ Ref: logicalIdOf(props.bucket!) });
    }
    const { statements } = policyStatementsOf(template, logicalIdOf(service.originRole));
    const items = statements.find((statement) => statement.Sid === 'CacheTableItems');
    expect(resourcesOf(items!)).toEqual([getAtt(logicalIdOf(props.table!), 'Arn')]);
  });

  it('adds the retired-body rules to the bucket, for the body prefix only', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({
            Id: 'IsrExpireRetiredBodies',
            Prefix: 'pages/',
            NoncurrentVersionExpiration: { NoncurrentDays: 7 },
          }),
        ]),
      },
    });
  });

  it("leaves cdk-nag nothing to report in the service (the user's resources are theirs)", () => {
    const report = new AwsSolutionsChecks().validateScope(service);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('accepts a Table (AWS::DynamoDB::Table) of the same shape', () => {
    const { template: legacy } = synthWith((s) => {
      const { partitionKey, sortKey, timeToLiveAttribute } = FACETHEORY_TABLE;
      const table = new Table(s, 'Legacy', { partitionKey, sortKey, timeToLiveAttribute });
      // Added after the table, as apps often do: the check runs once the app is built.
      table.addGlobalSecondaryIndex({
        indexName: 'status-index',
        partitionKey: { name: 'status_shard', type: AttributeType.STRING },
        sortKey: { name: 'status_at', type: AttributeType.NUMBER },
      });
      return { table };
    });
    expect(() => legacy()).not.toThrow();
  });
});

describe("synth checks the user's table and bucket (each a negative control of the above)", () => {
  const { globalSecondaryIndexes: gsis = [] } = FACETHEORY_TABLE;
  it.each([
    [
      'numeric partition key',
      { partitionKey: { name: 'pk', type: AttributeType.NUMBER } },
      /cache table must have the keys pk HASH S, sk RANGE S; it has pk HASH N, sk RANGE S/,
    ],
    ['no sort key', { sortKey: undefined }, /it has pk HASH S$/m],
    ['no TTL', { timeToLiveAttribute: undefined }, /TTL on the attribute `ttl`/],
    ['TTL on another attribute', { timeToLiveAttribute: 'expires' }, /TTL on the attribute `ttl`/],
    ['no status index', { globalSecondaryIndexes: [] }, /index status-index \(status_shard/],
    [
      'an index projecting keys only',
      { globalSecondaryIndexes: [{ ...gsis[0], projectionType: ProjectionType.KEYS_ONLY }] },
      /must project all attributes/,
    ],
  ] as const)('fails the synth for a table with %s', (_name, change, message) => {
    const { template } = synthWith((s) => ({
      table: new TableV2(s, 'Cache', { ...FACETHEORY_TABLE, ...change } as TablePropsV2),
    }));
    expect(() => template()).toThrow(message);
  });

  it('fails the synth for an unversioned bucket', () => {
    const { template } = synthWith((s) => ({ bucket: new Bucket(s, 'Pages') }));
    expect(() => template()).toThrow(/body bucket must be versioned/);
  });

  it('warns, and cannot check, an imported table and bucket; cdk-nag finds nothing new', () => {
    const { stack, service, template } = synthWith((s) => ({
      table: TableV2.fromTableName(s, 'Cache', 'facetheory-cache'),
      bucket: Bucket.fromBucketName(s, 'Pages', 'facetheory-pages'),
    }));
    // Each synth prints its warnings report; they are asserted here instead.
    const quiet = jest.spyOn(console, 'error').mockImplementation(() => {});
    let warnings: string[];
    try {
      template();
      warnings = Annotations.fromStack(stack)
        .findWarning('*', Match.anyValue())
        .map((warning) => JSON.stringify(warning.entry.data));
    } finally {
      quiet.mockRestore();
    }
    expect(warnings).toEqual([
      expect.stringMatching(/cache table .* is imported, so synth cannot check it/),
      expect.stringMatching(/body bucket .* is imported, so synth cannot check it/),
    ]);
    const report = new AwsSolutionsChecks().validateScope(service);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});

describe("customer managed keys of the user's table and bucket", () => {
  const {
    service,
    props,
    template: synth,
  } = synthWith((s) => {
    const tableKey = new Key(s, 'TableKey');
    const bucketKey = new Key(s, 'BucketKey');
    return {
      table: new TableV2(s, 'Cache', {
        ...FACETHEORY_TABLE,
        encryption: TableEncryptionV2.customerManagedKey(tableKey),
      }),
      bucket: new Bucket(s, 'Pages', {
        versioned: true,
        encryption: BucketEncryption.KMS,
        encryptionKey: bucketKey,
      }),
    };
  });
  const template = synth();
  /** Actions a role may take on one key (statements may name several resources). */
  const keyActionsOf = (role: Parameters<typeof logicalIdOf>[0], key: unknown) =>
    policyStatementsOf(template, logicalIdOf(role))
      .statements.filter((statement) =>
        resourcesOf(statement).some((resource) => JSON.stringify(resource) === JSON.stringify(key)),
      )
      .flatMap((statement) =>
        Array.isArray(statement.Action) ? statement.Action : [statement.Action],
      );
  const tableKey = getAtt(logicalIdOf(props.table!.encryptionKey!), 'Arn');
  const bucketKey = getAtt(logicalIdOf(props.bucket!.encryptionKey!), 'Arn');

  it('lets every function use the table key', () => {
    for (const role of [
      service.originRole,
      service.workerRole,
      service.sweeperRole,
      service.revalidateRole,
    ]) {
      expect(keyActionsOf(role, tableKey)).toEqual(
        expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey*']),
      );
    }
  });

  it('lets the origin read and write bodies with the bucket key, the worker only write', () => {
    expect(keyActionsOf(service.originRole, bucketKey)).toEqual(
      expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey*']),
    );
    expect(keyActionsOf(service.workerRole, bucketKey)).toContain('kms:GenerateDataKey*');
    expect(keyActionsOf(service.workerRole, bucketKey)).not.toContain('kms:Decrypt');
    expect(keyActionsOf(service.sweeperRole, bucketKey)).toEqual([]);
    expect(allowedActionsOf(template, logicalIdOf(service.revalidateRole))).not.toContain(
      's3:GetObject',
    );
  });

  it('acknowledges only the KMS data-key wildcards to cdk-nag', () => {
    const report = new AwsSolutionsChecks().validateScope(service);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual([]);
  });
});
