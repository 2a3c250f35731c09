import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { IsrService } from '../../lib/isr-service.js';
import { VPC_NETWORK_INTERFACE_ACTIONS } from '../../lib/isr-permissions.js';
import {
  actionsOf,
  allowedActionsOf,
  cdkJsonContext,
  coversAction,
  getAtt,
  logicalIdOf,
  policyStatementsOf,
  resourcesOf,
  serviceIds,
  resourceOf,
  synthIsrStack,
  type LambdaProperties,
  type PolicyStatementJson,
} from './stack-fixture.js';

const { template, service } = synthIsrStack();
const ids = serviceIds(service);
const arnOf = (logicalId: string) => getAtt(logicalId, 'Arn');
const bodiesArn = { 'Fn::Join': ['', [arnOf(ids.bucket), '/pages/*']] };

const statementsFor = (built: Template, roleId: string, service: string) =>
  policyStatementsOf(built, roleId).statements.filter((statement) =>
    actionsOf(statement).some((action) => action.startsWith(`${service}:`)),
  );

/** The boundaries every role must keep; each returns the offending statements. */
const boundaryBreaches = {
  dynamodbOutsideTable: (built: Template, roleId: string, tableId: string) =>
    statementsFor(built, roleId, 'dynamodb').filter(
      (statement) => JSON.stringify(resourcesOf(statement)) !== JSON.stringify([arnOf(tableId)]),
    ),
  scanOrQuery: (built: Template, roleId: string) =>
    ['dynamodb:Scan', 'dynamodb:Query'].filter((action) =>
      coversAction(allowedActionsOf(built, roleId), action),
    ),
  /** Query allowed on any partition: the worker's one Query is held to `TAG#` partitions. */
  unscopedQuery: (built: Template, roleId: string) =>
    statementsFor(built, roleId, 'dynamodb').filter(
      (statement) =>
        coversAction(actionsOf(statement), 'dynamodb:Query') &&
        !JSON.stringify(statement.Condition ?? {}).includes('"dynamodb:LeadingKeys":["TAG#*"]'),
    ),
  objectDelete: (built: Template, roleId: string) =>
    coversAction(allowedActionsOf(built, roleId), 's3:DeleteObject'),
};

describe('IAM boundaries', () => {
  it('use no AWS managed policy and no wildcard resource', () => {
    for (const role of [ids.originRole, ids.workerRole]) {
      const { statements, managedPolicyArns } = policyStatementsOf(template, role);
      expect(managedPolicyArns).toEqual([]);
      for (const statement of statements) {
        expect(resourcesOf(statement)).not.toContain('*');
        expect(actionsOf(statement).every((action) => !action.includes('*'))).toBe(true);
      }
    }
  });

  it('give both roles item access to the cache table only (and the tag index batches): no scan; the origin one Query, the worker one on TAG# partitions only', () => {
    const items = [
      'dynamodb:BatchGetItem',
      'dynamodb:BatchWriteItem',
      'dynamodb:ConditionCheckItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ];
    for (const [role, query] of [
      [ids.originRole, ['dynamodb:Query']],
      [ids.workerRole, []],
    ] as const) {
      const dynamodb = statementsFor(template, role, 'dynamodb');
      expect([...actionsOf(dynamodb[0])].sort()).toEqual([...items, ...query].sort());
      expect(boundaryBreaches.dynamodbOutsideTable(template, role, ids.table)).toEqual([]);
    }
    expect(statementsFor(template, ids.originRole, 'dynamodb')).toHaveLength(1);
    // The worker's fan-out step reads a tag's index rows: Query, on `TAG#` partitions only.
    const worker = statementsFor(template, ids.workerRole, 'dynamodb');
    expect(worker).toHaveLength(2);
    expect(worker[1]).toMatchObject({
      Action: 'dynamodb:Query',
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['TAG#*'] } },
    });
    expect(boundaryBreaches.unscopedQuery(template, ids.workerRole)).toEqual([]);
    expect(boundaryBreaches.scanOrQuery(template, ids.workerRole)).toEqual(['dynamodb:Query']);
  });

  it('never let the origin delete a body', () => {
    expect(boundaryBreaches.objectDelete(template, ids.originRole)).toBe(false);
    const s3 = statementsFor(template, ids.originRole, 's3');
    expect(s3).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: ['s3:GetObject', 's3:PutObject'],
          Resource: bodiesArn,
        }),
        expect.objectContaining({ Action: 's3:ListBucket', Resource: arnOf(ids.bucket) }),
      ]),
    );
    expect(s3).toHaveLength(2);
  });

  it('let the worker write and delete (never erase for good) bodies under pages/ only', () => {
    expect(boundaryBreaches.objectDelete(template, ids.workerRole)).toBe(true);
    expect(statementsFor(template, ids.workerRole, 's3')).toEqual([
      expect.objectContaining({
        Action: ['s3:DeleteObject', 's3:PutObject'],
        Resource: bodiesArn,
      }),
    ]);
  });

  it('scope both roles and the lifecycle rule to a configured body prefix', () => {
    const shared = synthIsrStack({ service: { bodyKeyPrefix: 'isr/bodies/' } });
    const sharedIds = serviceIds(shared.service);
    const prefixed = { 'Fn::Join': ['', [arnOf(sharedIds.bucket), '/isr/bodies/*']] };
    for (const role of [sharedIds.originRole, sharedIds.workerRole]) {
      const objectStatements = statementsFor(shared.template, role, 's3').filter((statement) =>
        actionsOf(statement).some((action) => action.includes('Object')),
      );
      expect(objectStatements.map((statement) => statement.Resource)).toEqual([prefixed]);
    }
    shared.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'isr/bodies/' })]),
      },
    });
    expect(() => synthIsrStack({ service: { bodyKeyPrefix: 'no-slash' } })).toThrow(
      /bodyKeyPrefix/,
    );
  });

  it('let the origin send to the regeneration queue and nothing else in SQS', () => {
    expect(statementsFor(template, ids.originRole, 'sqs')).toEqual([
      expect.objectContaining({ Action: 'sqs:SendMessage', Resource: arnOf(ids.queue) }),
    ]);
  });

  it('let the worker consume the queue and send only to it (the next fan-out step), the DLQ and the purge queue', () => {
    const sqs = statementsFor(template, ids.workerRole, 'sqs');
    const sends = sqs.filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));
    expect(sends).toEqual([
      expect.objectContaining({ Action: 'sqs:SendMessage', Resource: arnOf(ids.queue) }),
      expect.objectContaining({ Action: 'sqs:SendMessage', Resource: arnOf(ids.dlq) }),
      expect.objectContaining({
        Action: 'sqs:SendMessage',
        Resource: arnOf(logicalIdOf(service.purgeQueue)),
      }),
    ]);
    const consume = sqs.find((statement) => actionsOf(statement).includes('sqs:ReceiveMessage'));
    expect(consume?.Resource).toEqual(arnOf(ids.queue));
    expect(actionsOf(consume!)).toEqual(expect.arrayContaining(['sqs:DeleteMessage']));
    expect(actionsOf(consume!)).not.toContain('sqs:SendMessage');
  });

  it('let each function log only to its own log group', () => {
    for (const [role, fn] of [
      [ids.originRole, service.originFunction],
      [ids.workerRole, service.workerFunction],
    ] as const) {
      const logs = statementsFor(template, role, 'logs');
      expect(logs).toEqual([
        expect.objectContaining({
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: arnOf(logicalIdOf(fn.logGroup)),
        }),
      ]);
    }
  });

  it('let grantEnqueueRegeneration give another principal SendMessage on the queue only', () => {
    const { template: granted, service: grantedService } = synthIsrStack({
      alter: (altered) => {
        const webhook = new Role(altered, 'Webhook', {
          assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        });
        altered.grantEnqueueRegeneration(webhook);
      },
    });
    const webhook = logicalIdOf(grantedService.node.findChild('Webhook'));
    expect(policyStatementsOf(granted, webhook).statements).toEqual([
      expect.objectContaining({
        Action: 'sqs:SendMessage',
        Resource: arnOf(logicalIdOf(grantedService.queue)),
      }),
    ]);
  });

  it('catch a breach when one is introduced (negative control)', () => {
    const broken = synthIsrStack({
      alter: (altered) => {
        altered.originRole.addToPrincipalPolicy(
          new PolicyStatement({ actions: ['s3:Delete*'], resources: ['*'] }),
        );
        altered.workerRole.addToPrincipalPolicy(
          new PolicyStatement({ actions: ['dynamodb:Query'], resources: ['*'] }),
        );
      },
    });
    const built = broken.template;
    const originRole = logicalIdOf(broken.service.originRole);
    const workerRole = logicalIdOf(broken.service.workerRole);
    expect(boundaryBreaches.objectDelete(built, originRole)).toBe(true);
    // The worker's Query was held to `TAG#` partitions; this one is not.
    expect(boundaryBreaches.unscopedQuery(built, workerRole)).toHaveLength(1);
    expect(boundaryBreaches.unscopedQuery(template, ids.workerRole)).toEqual([]);
    const outside: PolicyStatementJson[] = boundaryBreaches.dynamodbOutsideTable(
      built,
      workerRole,
      logicalIdOf(broken.service.table),
    );
    expect(outside).toHaveLength(1);
  });
});

/** A service and an upstream secret in one stack, the way an app would wire them. */
function withUpstreamSecret(leak = false) {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Secretive');
  const secret = new Secret(stack, 'UpstreamSecret', {
    generateSecretString: { passwordLength: 48, excludePunctuation: true },
  });
  const service = new IsrService(stack, 'Isr', {
    renderOriginUrl: 'https://ssr.example.com',
    upstreamSecret: secret,
  });
  // negative control: what a leak would look like (the value resolved into the environment)
  if (leak) service.originFunction.addEnvironment('LEAKED', secret.secretValue.unsafeUnwrap());
  return { template: Template.fromStack(stack), stack, secret, service };
}

/** The resources whose properties hold a Secrets Manager dynamic reference (a value resolved at deploy). */
function resolvedSecretsIn(template: Template): string[] {
  const resources = template.toJSON().Resources as Record<string, unknown>;
  return Object.entries(resources)
    .filter(([, resource]) => /resolve:secretsmanager/.test(JSON.stringify(resource)))
    .map(([id]) => id);
}

describe('upstream secret', () => {
  it('reaches the functions as its ARN only, never as a value', () => {
    const { template: built, stack, secret, service: secretive } = withUpstreamSecret();
    const secretRef = stack.resolve(secret.secretArn) as unknown;
    for (const fn of [secretive.originFunction, secretive.workerFunction]) {
      const variables = resourceOf<LambdaProperties>(built, logicalIdOf(fn)).Properties.Environment
        .Variables;
      expect(variables.ISR_UPSTREAM_SECRET_ARN).toEqual(secretRef);
      expect(variables.ISR_UPSTREAM_SECRET_HEADER).toBe('x-isr-origin-secret');
    }
    // The value is resolved at deploy in one place only: the upstream origin's custom header
    // (CloudFront sends it there); no function, role or output holds it.
    expect(resolvedSecretsIn(built)).toEqual([logicalIdOf(secretive.distribution)]);
    // negative control: a resolved secret value would show as a dynamic reference
    const leaked = withUpstreamSecret(true).template;
    expect(resolvedSecretsIn(leaked)).toContain(logicalIdOf(secretive.originFunction));
  });

  it('may be read by the two functions only, and only that secret', () => {
    const { template: built, stack, secret, service: secretive } = withUpstreamSecret();
    const secretRef = stack.resolve(secret.secretArn) as unknown;
    const readers: string[] = [];
    for (const id of Object.keys(built.findResources('AWS::IAM::Role'))) {
      const reads = policyStatementsOf(built, id).statements.filter((statement) =>
        coversAction(actionsOf(statement), 'secretsmanager:GetSecretValue'),
      );
      if (reads.length === 0) continue;
      readers.push(id);
      expect(reads).toEqual([
        expect.objectContaining({ Action: 'secretsmanager:GetSecretValue', Resource: secretRef }),
      ]);
    }
    expect(readers.sort()).toEqual(
      [logicalIdOf(secretive.originRole), logicalIdOf(secretive.workerRole)].sort(),
    );
  });
});

describe('VPC placement', () => {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Private');
  const placed = new IsrService(stack, 'Isr', { vpc: new Vpc(stack, 'Vpc', { maxAzs: 2 }) });
  const built = Template.fromStack(stack);

  it("gives Lambda the network-interface actions, denied to the function's own code", () => {
    for (const role of [placed.originRole, placed.workerRole]) {
      const { statements, managedPolicyArns } = policyStatementsOf(built, logicalIdOf(role));
      expect(managedPolicyArns).toEqual([]);
      const ec2 = statements.filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('ec2:')),
      );
      expect(ec2).toEqual([
        expect.objectContaining({
          Effect: 'Allow',
          Action: [...VPC_NETWORK_INTERFACE_ACTIONS].sort(),
          Resource: '*',
        }),
        expect.objectContaining({
          Effect: 'Deny',
          Action: [...VPC_NETWORK_INTERFACE_ACTIONS].sort(),
          Resource: '*',
          Condition: { Null: { 'lambda:SourceFunctionArn': 'false' } },
        }),
      ]);
    }
  });

  it('adds no network access without a VPC', () => {
    for (const role of [ids.originRole, ids.workerRole]) {
      expect(coversAction(allowedActionsOf(template, role), 'ec2:CreateNetworkInterface')).toBe(
        false,
      );
    }
  });
});
