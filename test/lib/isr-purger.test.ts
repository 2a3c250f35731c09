/**
 * The purge queue, its DLQ and the purger (soft purges, docs/REVALIDATION.md "CDN purge"): the
 * queue's shape, the event source that batches it, each function's part in purging (only the
 * purger, the revalidate function and the sweeper may invalidate, on this distribution only),
 * and the environment each reads.
 */
import { describe, expect, it } from '@jest/globals';
import { Duration } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { PENDING_PURGES_PK } from '../../lambda/core/page/rows.js';
import { wireCdnPurge } from '../../lib/isr-cdn.js';
import { PURGER_TIMEOUT } from '../../lib/isr-settings.js';
import {
  actionsOf,
  allowedActionsOf,
  coversAction,
  distributionArnOf,
  getAtt,
  logicalIdOf,
  policyStatementsOf,
  resourceOf,
  resourcesOf,
  serviceIds,
  synthIsrStack,
  type LambdaProperties,
} from './stack-fixture.js';

const { template, service } = synthIsrStack();
/** Every purge prop away from its default, in one synth. */
const { template: tuned } = synthIsrStack({
  service: {
    purgeBatchSize: 5_000,
    purgeBatchWindow: Duration.seconds(20),
    purgeDeadlineSeconds: 120,
    softPurgeMaxPages: 50,
  },
});
const ids = {
  ...serviceIds(service),
  purgeQueue: logicalIdOf(service.purgeQueue),
  purgeDlq: logicalIdOf(service.purgeDeadLetterQueue),
  purger: logicalIdOf(service.purgerFunction),
  purgerRole: logicalIdOf(service.purgerRole),
  revalidate: logicalIdOf(service.revalidateFunction),
  revalidateRole: logicalIdOf(service.revalidateRole),
  sweeperRole: logicalIdOf(service.sweeperRole),
};
const envOf = (built: Template, fnId: string) =>
  resourceOf<LambdaProperties>(built, fnId).Properties.Environment.Variables;

/** Every role of `built` allowed CreateInvalidation, by logical id. */
function invalidatingRoles(built: Template): string[] {
  const roles = Object.keys(built.findResources('AWS::IAM::Role'));
  return roles
    .filter((role) => coversAction(allowedActionsOf(built, role), 'cloudfront:CreateInvalidation'))
    .sort();
}

describe('the purge queue', () => {
  it('is a standard queue (a deadline is a delayed message), SQS-encrypted, redriven to its own DLQ after maxReceiveCount', () => {
    const queue = resourceOf<Record<string, unknown>>(template, ids.purgeQueue).Properties;
    expect(queue.FifoQueue).toBeUndefined();
    expect(queue).toMatchObject({
      SqsManagedSseEnabled: true,
      RedrivePolicy: { deadLetterTargetArn: getAtt(ids.purgeDlq, 'Arn'), maxReceiveCount: 5 },
      VisibilityTimeout: 6 * PURGER_TIMEOUT.toSeconds(),
    });
    const dlq = resourceOf<Record<string, unknown>>(template, ids.purgeDlq).Properties;
    expect(dlq.FifoQueue).toBeUndefined();
    expect(dlq).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    expect(dlq.RedrivePolicy).toBeUndefined();
  });

  it('is consumed by the purger alone, in batches of 1,000 gathered over 5 s, two at most at once, with partial batch responses', () => {
    template.resourcePropertiesCountIs(
      'AWS::Lambda::EventSourceMapping',
      { EventSourceArn: getAtt(ids.purgeQueue, 'Arn') },
      1,
    );
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: getAtt(ids.purgeQueue, 'Arn'),
      FunctionName: { Ref: ids.purger },
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 5,
      ScalingConfig: { MaximumConcurrency: 2 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('takes the batch size and window from the props, and refuses a batch past 10 without a window', () => {
    tuned.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 5000,
      MaximumBatchingWindowInSeconds: 20,
    });
    expect(() =>
      synthIsrStack({ service: { purgeBatchSize: 100, purgeBatchWindow: Duration.seconds(0) } }),
    ).toThrow(/purgeBatchWindow must be at least 1 s when purgeBatchSize \(100\) is above 10/);
    expect(() => synthIsrStack({ service: { purgeBatchSize: 20_000 } })).toThrow(
      /purgeBatchSize must be an integer 1\.\.10000/,
    );
  });
});

describe('who may purge the CDN', () => {
  it('is the purger, the revalidate function and the sweeper, on this distribution only', () => {
    expect(invalidatingRoles(template)).toEqual(
      [ids.purgerRole, ids.revalidateRole, ids.sweeperRole].sort(),
    );
    for (const role of [ids.purgerRole, ids.revalidateRole, ids.sweeperRole]) {
      const purges = policyStatementsOf(template, role).statements.filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('cloudfront:')),
      );
      expect(purges).toHaveLength(1);
      expect(actionsOf(purges[0])).toEqual(['cloudfront:CreateInvalidation']);
      expect(resourcesOf(purges[0])).toEqual([distributionArnOf(ids.distribution)]);
    }
  });

  it('negative control: a purge wired to the worker would be caught', () => {
    const { template: widened, service: built } = synthIsrStack({
      alter: (s) => wireCdnPurge(s.workerFunction, s.distribution),
    });
    expect(invalidatingRoles(widened)).toContain(logicalIdOf(built.workerRole));
  });

  it('leaves the worker SendMessage on the purge queue and nothing on CloudFront', () => {
    const worker = allowedActionsOf(template, ids.workerRole);
    expect(worker.filter((action) => action.startsWith('cloudfront:'))).toEqual([]);
    const sends = policyStatementsOf(template, ids.workerRole).statements.filter(
      (statement) =>
        JSON.stringify(resourcesOf(statement)) === JSON.stringify([getAtt(ids.purgeQueue, 'Arn')]),
    );
    expect(sends.map(actionsOf)).toEqual([['sqs:SendMessage']]);
  });

  it('lets the revalidate function send to the purge queue (a deadline), and the origin and the sweeper not', () => {
    const sendsToPurgeQueue = (role: string) =>
      policyStatementsOf(template, role).statements.some(
        (statement) =>
          actionsOf(statement).includes('sqs:SendMessage') &&
          JSON.stringify(resourcesOf(statement)).includes(ids.purgeQueue),
      );
    expect(sendsToPurgeQueue(ids.revalidateRole)).toBe(true);
    expect(sendsToPurgeQueue(ids.originRole)).toBe(false);
    expect(sendsToPurgeQueue(ids.sweeperRole)).toBe(false);
  });
});

describe('the purger', () => {
  const statements = policyStatementsOf(template, ids.purgerRole).statements;
  const of = (service: string) =>
    statements.filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith(`${service}:`)),
    );

  it('writes pending purges only (PutItem on the CDN#PENDING partition), and reads no page', () => {
    expect(of('dynamodb')).toEqual([
      expect.objectContaining({
        Action: 'dynamodb:PutItem',
        Resource: getAtt(ids.table, 'Arn'),
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [PENDING_PURGES_PK] },
        },
      }),
    ]);
    expect(of('s3')).toEqual([]);
  });

  it('consumes the purge queue and sends only to its DLQ', () => {
    const sqs = of('sqs');
    const sends = sqs.filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));
    expect(sends).toEqual([
      expect.objectContaining({
        Action: 'sqs:SendMessage',
        Resource: getAtt(ids.purgeDlq, 'Arn'),
      }),
    ]);
    const consume = sqs.find((statement) => actionsOf(statement).includes('sqs:ReceiveMessage'));
    expect(consume?.Resource).toEqual(getAtt(ids.purgeQueue, 'Arn'));
  });

  it('reads exactly the purge settings: its DLQ, the table, the distribution, the receive budget', () => {
    const env = envOf(template, ids.purger);
    expect(env).toMatchObject({
      ISR_PURGE_DLQ_URL: { Ref: ids.purgeDlq },
      FACETHEORY_CACHE_TABLE_NAME: { Ref: ids.table },
      ISR_CDN_DISTRIBUTION_ID: { Ref: ids.distribution },
      ISR_MAX_RECEIVE_COUNT: '5',
      ISR_FUNCTION_TIMEOUT_MS: String(PURGER_TIMEOUT.toMilliseconds()),
      POWERTOOLS_SERVICE_NAME: 'isr-purger',
    });
    for (const absent of ['ISR_BODY_BUCKET', 'ISR_QUEUE_URL', 'RENDER_ORIGIN_URL']) {
      expect(env).not.toHaveProperty(absent);
    }
    const fn = resourceOf<LambdaProperties>(template, ids.purger).Properties;
    expect(fn).toMatchObject({ Timeout: PURGER_TIMEOUT.toSeconds(), MemorySize: 256 });
  });

  it('tells the worker and the revalidate function the purge queue, the deadline and the bound', () => {
    for (const fn of [ids.worker, ids.revalidate]) {
      expect(envOf(template, fn)).toMatchObject({
        ISR_PURGE_QUEUE_URL: { Ref: ids.purgeQueue },
        ISR_PURGE_DEADLINE_SECONDS: '300',
        ISR_SOFT_PURGE_MAX_PAGES: '1000',
      });
    }
    tuned.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          ISR_PURGE_DEADLINE_SECONDS: '120',
          ISR_SOFT_PURGE_MAX_PAGES: '50',
        }),
      },
    });
    expect(() => synthIsrStack({ service: { purgeDeadlineSeconds: 901 } })).toThrow(
      /purgeDeadlineSeconds must be an integer 1\.\.900/,
    );
  });

  it("names the purge DLQ in the stack's outputs, for its runbook", () => {
    template.hasOutput('PurgeDeadLetterQueueUrl', { Value: { Ref: ids.purgeDlq } });
    template.hasOutput('PurgeDeadLetterQueueArn', { Value: getAtt(ids.purgeDlq, 'Arn') });
  });

  it('is exposed with its role on the construct', () => {
    expect(service.purgerRole.roleArn).toBeDefined();
    expect(service.purgerFunction.functionArn).toBeDefined();
  });
});
