// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { IsrService } from '../../lib/isr-service.js';
import { REVALIDATE_TABLE_ACTIONS } from '../../lib/isr-permissions.js';
import { functionEnvironment } from '../../lib/isr-functions.js';
import { resolveSettings } from '../../lib/isr-settings.js';
import { loadRevalidateConfig } from '../../lambda/shared/config.js';
import {
  actionsOf,
  allowedActionsOf,
  cdkJsonContext,
  coversAction,
  getAtt,
  logicalIdOf,
  policyStatementsOf,
  resourceOf,
  resourcesOf,
  synthIsrStack,
  type LambdaProperties,
  distributionArnOf,
} from './stack-fixture.js';
import { evaluate, resolveValue, type IamRequest, type Statement } from '../helpers/iam-policy.js';

/** A service with a webhook key, in one stack the way an app would wire them. */
function withWebhookSecret() {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Webhooks');
  const secret = new Secret(stack, 'WebhookKey');
  const service = new IsrService(stack, 'Isr', { revalidateWebhookSecret: secret });
  return { template: Template.fromStack(stack), stack, secret, service };
}

describe('the revalidate endpoint', () => {
  const { template, service } = synthIsrStack();
  const fnId = logicalIdOf(service.revalidateFunction);
  const roleId = logicalIdOf(service.revalidateRole);

  it('has its own function URL with AWS_IAM auth by default, in the stack outputs', () => {
    template.hasResourceProperties('AWS::Lambda::Url', {
      TargetFunctionArn: getAtt(fnId, 'Arn'),
      AuthType: 'AWS_IAM',
    });
    template.hasOutput('RevalidateUrl', {
      Value: getAtt(logicalIdOf(service.revalidateUrl), 'FunctionUrl'),
    });
  });

  it('gives its role the table items and the queue it needs, and nothing else', () => {
    const statements = policyStatementsOf(template, roleId).statements;
    const table = statements.find((statement) => statement.Sid === 'RevalidationItems');
    expect(actionsOf(table!).sort()).toEqual([...REVALIDATE_TABLE_ACTIONS].sort());
    expect(resourcesOf(table!)).toEqual([getAtt(logicalIdOf(service.table), 'Arn')]);
    const queue = statements.find((statement) => statement.Sid === 'EnqueueRegeneration');
    expect(queue?.Action).toBe('sqs:SendMessage');
    expect(resourcesOf(queue!)).toEqual([getAtt(logicalIdOf(service.queue), 'Arn')]);
    const actions = allowedActionsOf(template, roleId);
    for (const never of [
      's3:GetObject',
      's3:PutObject',
      'dynamodb:Scan',
      'dynamodb:BatchWriteItem',
      'sqs:ReceiveMessage',
      'secretsmanager:GetSecretValue',
      'cloudfront:ListDistributions',
    ]) {
      expect(coversAction(actions, never)).toBe(false);
    }
  });

  it("may BatchGetItem tags' revalidation times, on TAG# partitions only (a data cache's read)", () => {
    const statements = policyStatementsOf(template, roleId).statements;
    const batchGets = statements.filter((statement) =>
      coversAction(actionsOf(statement), 'dynamodb:BatchGetItem'),
    );
    expect(batchGets).toEqual([
      expect.objectContaining({
        Sid: 'ReadTagTimes',
        Action: 'dynamodb:BatchGetItem',
        Resource: getAtt(logicalIdOf(service.table), 'Arn'),
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TAG#*'] } },
      }),
    ]);
  });

  it('may purge this distribution by cache tag, and knows which one', () => {
    const purge = policyStatementsOf(template, roleId).statements.filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('cloudfront:')),
    );
    expect(purge).toHaveLength(1);
    expect(actionsOf(purge[0])).toEqual(['cloudfront:CreateInvalidation']);
    expect(resourcesOf(purge[0])).toEqual([distributionArnOf(logicalIdOf(service.distribution))]);
    const variables = resourceOf<LambdaProperties>(template, fnId).Properties.Environment.Variables;
    expect(variables.ISR_CDN_DISTRIBUTION_ID).toEqual({ Ref: logicalIdOf(service.distribution) });
  });

  it('is configured with the environment its cold start accepts', () => {
    const variables = resourceOf<LambdaProperties>(template, fnId).Properties.Environment.Variables;
    expect(variables).toMatchObject({
      ISR_QUEUE_URL: { Ref: logicalIdOf(service.queue) },
      POWERTOOLS_SERVICE_NAME: 'isr-revalidate',
    });
    expect(variables.ISR_REVALIDATE_SECRET_ARN).toBeUndefined();
    const env = functionEnvironment('revalidate', resolveSettings({}), {
      tableName: 'isr-cache',
      bucketName: 'isr-bodies',
      queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr.fifo',
      deadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-dlq.fifo',
      purgeQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-purge',
      purgeDeadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-purge-dlq',
    });
    expect(loadRevalidateConfig(env).revalidateMaxPaths).toBe(100);
  });

  it('grantRevalidate gives a SigV4 caller what AWS requires of a function URL caller, on this function only (issue 31, fix 6)', () => {
    const { template: granted, service: granting } = synthIsrStack({
      alter: (built) => {
        const cms = new Role(built, 'Cms', {
          assumedBy: new ServicePrincipal('ec2.amazonaws.com'),
        });
        built.grantRevalidate(cms);
      },
    });
    const cmsId = Object.keys(granted.findResources('AWS::IAM::Role')).find((id) =>
      id.includes('Cms'),
    );
    const functionId = logicalIdOf(granting.revalidateFunction);
    const arn = 'arn:aws:lambda:us-east-1:123456789012:function:isr-revalidate';
    const statements = policyStatementsOf(granted, cmsId!).statements.map(
      (statement) => resolveValue(statement, { [`${functionId}.Arn`]: arn }) as Statement,
    );
    // "Control access to Lambda function URLs" (https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html):
    // since October 2025 a new function URL needs both actions of its caller.
    const viaUrl: IamRequest[] = [
      {
        action: 'lambda:InvokeFunctionUrl',
        resource: arn,
        context: { 'lambda:functionurlauthtype': 'AWS_IAM' },
      },
      {
        action: 'lambda:InvokeFunction',
        resource: arn,
        context: { 'lambda:invokedviafunctionurl': 'true' },
      },
    ];
    expect(viaUrl.map((request) => evaluate(statements, request))).toEqual(['allowed', 'allowed']);
    // Nothing more: not a plain Invoke, not another function.
    expect(evaluate(statements, { action: 'lambda:InvokeFunction', resource: arn })).toBe(
      'implicit-deny',
    );
    expect(evaluate(statements, { ...viaUrl[0], resource: `${arn}-other` })).toBe('implicit-deny');
    // Negative control: the grant before the fix (InvokeFunctionUrl alone) fails the caller.
    const before = statements.filter(
      (statement) => statement.Action === 'lambda:InvokeFunctionUrl',
    );
    expect(viaUrl.map((request) => evaluate(before, request))).toEqual([
      'allowed',
      'implicit-deny',
    ]);
  });
});

describe('the revalidate endpoint in HMAC mode', () => {
  it('takes no IAM auth on its URL and is told the secret by ARN', () => {
    const { template, stack, secret, service } = withWebhookSecret();
    template.hasResourceProperties('AWS::Lambda::Url', {
      TargetFunctionArn: getAtt(logicalIdOf(service.revalidateFunction), 'Arn'),
      AuthType: 'NONE',
    });
    const variables = resourceOf<LambdaProperties>(
      template,
      logicalIdOf(service.revalidateFunction),
    ).Properties.Environment.Variables;
    expect(variables.ISR_REVALIDATE_SECRET_ARN).toEqual(stack.resolve(secret.secretArn));
    expect(JSON.stringify(template.toJSON())).not.toMatch(/resolve:secretsmanager/);
  });

  it('lets the revalidate role alone read that secret, through the extension layer', () => {
    const { template, stack, secret, service } = withWebhookSecret();
    const readers = Object.keys(template.findResources('AWS::IAM::Role')).filter((id) =>
      policyStatementsOf(template, id).statements.some((statement) =>
        coversAction(actionsOf(statement), 'secretsmanager:GetSecretValue'),
      ),
    );
    expect(readers).toEqual([logicalIdOf(service.revalidateRole)]);
    const reads = policyStatementsOf(
      template,
      logicalIdOf(service.revalidateRole),
    ).statements.filter((statement) =>
      coversAction(actionsOf(statement), 'secretsmanager:GetSecretValue'),
    );
    expect(reads).toEqual([
      expect.objectContaining({
        Action: 'secretsmanager:GetSecretValue',
        Resource: stack.resolve(secret.secretArn) as unknown,
      }),
    ]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ POWERTOOLS_SERVICE_NAME: 'isr-revalidate' }),
      },
      Layers: Match.anyValue(),
    });
  });

  it('is capped by reserved concurrency, since anyone may call its URL (issue 19, item 12)', () => {
    const reservedOf = (built: ReturnType<typeof synthIsrStack>) =>
      resourceOf<{ ReservedConcurrentExecutions?: number }>(
        built.template,
        logicalIdOf(built.service.revalidateFunction),
      ).Properties.ReservedConcurrentExecutions;
    const { template, service } = withWebhookSecret();
    expect(
      resourceOf<{ ReservedConcurrentExecutions?: number }>(
        template,
        logicalIdOf(service.revalidateFunction),
      ).Properties.ReservedConcurrentExecutions,
    ).toBe(10);
    expect(reservedOf(synthIsrStack({ service: { revalidateReservedConcurrency: 3 } }))).toBe(3);
    expect(
      reservedOf(synthIsrStack({ service: { revalidateReservedConcurrency: 0 } })),
    ).toBeUndefined();
    expect(() => resolveSettings({ revalidateReservedConcurrency: -1 })).toThrow(
      /revalidateReservedConcurrency must be an integer >= 0/,
    );
  });

  it('refuses a secret without a complete ARN', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Partial');
    const partial = Secret.fromSecretNameV2(stack, 'ByName', 'webhook');
    expect(() => new IsrService(stack, 'Isr', { revalidateWebhookSecret: partial })).toThrow(
      /revalidateWebhookSecret needs a complete ARN/,
    );
  });
});
