// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
/* eslint-disable jest/expect-expect */
import { describe, expect, it } from '@jest/globals';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { PENDING_PURGES_PK, StatusIndex, SweepCursorKey } from '../../lambda/core/page/rows.js';
import { loadSweeperConfig } from '../../lambda/shared/config.js';
import { functionEnvironment } from '../../lib/isr-functions.js';
import { resolveSettings } from '../../lib/isr-settings.js';
import {
  actionsOf,
  getAtt,
  logicalIdOf,
  policyStatementsOf,
  resourcesOf,
  serviceIds,
  synthIsrStack,
  type PolicyStatementJson,
  distributionArnOf,
} from './stack-fixture.js';

const { template, service } = synthIsrStack();
const ids = serviceIds(service);
const sweeperId = logicalIdOf(service.sweeperFunction);
const sweeperRoleId = logicalIdOf(service.sweeperRole);

/** Every statement the sweeper's role may use, keyed by what it allows, where and on what condition. */
const EXPECTED_SWEEPER_GRANTS = (
  tableArn: unknown,
  bucketArn: unknown,
  distributionId: string,
  queueArn: unknown,
) => ({
  /** A stalled revalidation fan-out is resent to the regeneration queue, and only there. */
  ResumeFanOuts: { actions: ['sqs:SendMessage'], resources: [queueArn] },
  StatusIndex: {
    actions: ['dynamodb:Query'],
    resources: [{ 'Fn::Join': ['', [tableArn, `/index/${StatusIndex.Name}`]] }],
  },
  PageReferences: { actions: ['dynamodb:GetItem', 'dynamodb:Query'], resources: [tableArn] },
  /** Any page's VER# rows: IAM cannot scope by sort key; the condition on META guards them. */
  ForgetUnlistedVersions: {
    actions: ['dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem'],
    resources: [tableArn],
  },
  SweepCursor: {
    actions: ['dynamodb:PutItem'],
    resources: [tableArn],
    condition: {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SweepCursorKey.pk] },
    },
  },
  /** REQ# rows a later publish made moot: page partitions only. */
  ResolveMootWork: {
    actions: ['dynamodb:UpdateItem'],
    resources: [tableArn],
    condition: {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CACHE#*', 'TENANT#*'] },
    },
  },
  ListBodies: {
    actions: ['s3:ListBucket'],
    resources: [bucketArn],
    condition: { StringLike: { 's3:prefix': ['pages/*'] } },
  },
  RetireOrphanBodies: {
    actions: ['s3:DeleteObject'],
    resources: [{ 'Fn::Join': ['', [bucketArn, '/pages/*']] }],
  },
  PendingCdnPurges: {
    actions: ['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    resources: [tableArn],
    condition: {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [PENDING_PURGES_PK] },
    },
  },
  /** `grantCdnInvalidation` (no Sid): this distribution only. */
  CdnPurge: {
    actions: ['cloudfront:CreateInvalidation'],
    resources: [distributionArnOf(distributionId)],
  },
});

/** Statements of the sweeper role beyond its own logs that are not exactly the expected ones. */
function sweeperBreaches(built: Template): PolicyStatementJson[] {
  const expected: Record<string, { actions: string[]; resources: unknown[]; condition?: unknown }> =
    EXPECTED_SWEEPER_GRANTS(
      getAtt(ids.table, 'Arn'),
      getAtt(ids.bucket, 'Arn'),
      logicalIdOf(service.distribution),
      getAtt(ids.queue, 'Arn'),
    );
  return policyStatementsOf(built, sweeperRoleId).statements.filter((statement) => {
    if (actionsOf(statement).every((action) => action.startsWith('logs:'))) return false;
    const purge = JSON.stringify(actionsOf(statement)) === '["cloudfront:CreateInvalidation"]';
    const key = statement.Sid ?? (purge ? 'CdnPurge' : undefined);
    const grant = key === undefined ? undefined : expected[key];
    return (
      grant === undefined ||
      statement.Effect !== 'Allow' ||
      JSON.stringify([...actionsOf(statement)].sort()) !== JSON.stringify(grant.actions) ||
      JSON.stringify(resourcesOf(statement)) !== JSON.stringify(grant.resources) ||
      JSON.stringify(statement.Condition) !== JSON.stringify(grant.condition)
    );
  });
}

describe('the sweeper', () => {
  it('reads a sparse status index: sharded key, sorted by when, every attribute projected', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: [
        {
          IndexName: StatusIndex.Name,
          KeySchema: [
            { AttributeName: StatusIndex.PartitionKey, KeyType: 'HASH' },
            { AttributeName: StatusIndex.SortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
  });

  it('runs every 5 minutes on an EventBridge schedule, without retries piling up', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: getAtt(sweeperId, 'Arn'),
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: getAtt(sweeperId, 'Arn'),
      Principal: 'events.amazonaws.com',
    });
  });

  it('runs alone, with its own role and the settings config.ts reads', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Role: getAtt(sweeperRoleId, 'Arn'),
      ReservedConcurrentExecutions: 1,
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: 'isr-sweeper',
          ISR_ORPHAN_AGE_SECONDS: '3600',
          ISR_BODY_PREFIX: 'pages/',
        }),
      },
    });
    const refs = {
      tableName: 'cache',
      bucketName: 'bodies',
      queueUrl: 'https://q',
      deadLetterQueueUrl: 'https://d',
      purgeQueueUrl: 'https://p',
      purgeDeadLetterQueueUrl: 'https://pd',
    };
    const env = functionEnvironment('sweeper', resolveSettings({}), refs);
    expect(loadSweeperConfig(env)).toMatchObject({ orphanAgeSeconds: 3_600, bucket: 'bodies' });
  });

  it('refuses a safety window a render could still publish within, at synth and at cold start', () => {
    expect(() => resolveSettings({ orphanAgeSeconds: 900 })).toThrow(/orphanAgeSeconds/);
    expect(() =>
      loadSweeperConfig({
        FACETHEORY_CACHE_TABLE_NAME: 'cache',
        ISR_BODY_BUCKET: 'bodies',
        ISR_ORPHAN_AGE_SECONDS: '900',
      }),
    ).toThrow(/ISR_ORPHAN_AGE_SECONDS/);
    expect(resolveSettings({ orphanAgeSeconds: 931 }).orphanAgeSeconds).toBe(931);
  });

  it('has a least-privilege role: the index, reads of a page, its cursor row, the body prefix', () => {
    expect(sweeperBreaches(template)).toEqual([]);
    const allowed = policyStatementsOf(template, sweeperRoleId).statements.map((s) => s.Sid);
    expect(allowed).toEqual(expect.arrayContaining(['StatusIndex', 'SweepCursor', 'ListBodies']));
  });

  it('catches a broader grant when one is introduced (negative control)', () => {
    const { template: broadened } = synthIsrStack({
      alter: (built) =>
        built.sweeperRole.addToPrincipalPolicy(
          new PolicyStatement({
            sid: 'SweepCursorAnyRow',
            actions: ['dynamodb:PutItem'],
            resources: [built.table.tableArn],
          }),
        ),
    });
    expect(sweeperBreaches(broadened)).toHaveLength(1);
  });

  it('alarms on missing tasks, failed tasks, abandoned leases and its own errors', () => {
    const metricAlarm = (metricName: string, threshold: number, evaluationPeriods: number) =>
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'FaceTheoryIsr',
        MetricName: metricName,
        Dimensions: [{ Name: 'service', Value: 'isr-sweeper' }],
        Statistic: 'Maximum',
        Period: 300,
        Threshold: threshold,
        EvaluationPeriods: evaluationPeriods,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmDescription: Match.stringLikeRegexp('^ISR: .+ Runbook: .+'),
      });
    metricAlarm('MissingTasks', 0, 2);
    metricAlarm('FailedTasks', 0, 1);
    metricAlarm('AbandonedLeases', 10, 1);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: sweeperId } }],
      Threshold: 0,
    });
  });

  it('sends its alarms, fired and OK again, to the alarm topic', () => {
    const withTopic = synthIsrStack({
      alter: (built) => {
        const topic = new Topic(built, 'Pager');
        built.addAlarmAction({ bind: () => ({ alarmActionArn: topic.topicArn }) });
        built.addOkAction({ bind: () => ({ alarmActionArn: topic.topicArn }) });
      },
    });
    for (const name of ['MissingTasks', 'FailedTasks', 'AbandonedLeases']) {
      withTopic.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: name,
        AlarmActions: [Match.anyValue()],
        OKActions: [Match.anyValue()],
      });
    }
  });

  it('has a dashboard: requests, hit ratio, regeneration, queue, DLQ, stuck and failed work', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = JSON.stringify(
      Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties,
    );
    for (const title of [
      'Requests by cache status',
      'Hit ratio',
      'Regeneration latency',
      'Renders',
      'Queue age',
      'DLQ depth',
      'Stuck and failed work',
    ])
      expect(body).toContain(title);
    for (const metric of [
      'CacheHits',
      'CacheStale',
      'CacheMisses',
      'RegenerationDuration',
      'Regenerations',
      'ApproximateAgeOfOldestMessage',
      'ApproximateNumberOfMessagesVisible',
      'MissingTasks',
      'FailedTasks',
      'AbandonedLeases',
      'UnlistedVersionsDeleted',
    ])
      expect(body).toContain(`\\"${metric}\\"`);
    // Every queue and DLQ, the CDN purges' included, by the queue's name in the metric.
    const queues = Object.keys(template.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(4);
    for (const queue of queues) expect(body).toContain(`"${queue}"`);
  });
});
