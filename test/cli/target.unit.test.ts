/**
 * `--stack <name>`: the CLI's target from the stack's CloudFormation outputs (DescribeStacks,
 * mocked), and the clear errors (exit code 3) when the stack is missing or too old.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { cdnInvalidatorFor } from '../../cli/cdn.js';
import { TargetError } from '../../cli/errors.js';
import { run } from '../../cli/run.js';
import { destroyTarget, stackTarget, type Target } from '../../cli/target.js';
import { CloudFrontInvalidator } from '../../lambda/adapters/cdn-invalidator/cloudfront.js';
import { createAwsClients } from '../../lambda/shared/aws-clients.js';

const cfnMock = mockClient(CloudFormationClient);
afterEach(() => {
  cfnMock.reset();
});

const settings = {
  allowedQueryParams: ['page'],
  renderPaths: ['/blog/*'],
  tenantHeader: 'x-tenant',
  tenants: ['acme'],
  leaseSeconds: 120,
  retention: { idleSeconds: 86_400, goneSeconds: 3_600 },
};
const outputs: Record<string, string> = {
  TableName: 'isr-table',
  BucketName: 'isr-bucket',
  QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123/isr.fifo',
  DeadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123/isr-dlq.fifo',
  RevalidateUrl: 'https://abc.lambda-url.eu-west-1.on.aws/',
  DistributionId: 'E2QWRUHAPOMQZL',
  OpsSettings: JSON.stringify(settings),
};
const stackWith = (values: Record<string, string>) => ({
  Stacks: [
    {
      StackName: 'FaceTheoryIsr',
      StackStatus: 'UPDATE_COMPLETE' as const,
      CreationTime: new Date(),
      Outputs: Object.entries(values).map(([OutputKey, OutputValue]) => ({
        OutputKey,
        OutputValue,
      })),
    },
  ],
});
/** The outputs minus some, as a stack deployed before they existed has them. */
const without = (...names: string[]) =>
  Object.fromEntries(Object.entries(outputs).filter(([name]) => !names.includes(name)));
const cfn = () => new CloudFormationClient({ region: 'eu-west-1' });

describe('the --stack target', () => {
  it('takes the table, bucket, queues, endpoint and key settings from the outputs, in the stack region', async () => {
    cfnMock.on(DescribeStacksCommand, { StackName: 'FaceTheoryIsr' }).resolves(stackWith(outputs));
    const target = await stackTarget('FaceTheoryIsr', cfn());
    expect(target).toMatchObject({
      kind: 'stack',
      name: 'FaceTheoryIsr',
      region: 'eu-west-1',
      tableName: 'isr-table',
      bucket: 'isr-bucket',
      queueUrl: outputs.QueueUrl,
      dlqUrl: outputs.DeadLetterQueueUrl,
      revalidateUrl: outputs.RevalidateUrl,
      distributionId: 'E2QWRUHAPOMQZL',
      settings,
    });
    expect(await target.clients.dynamodb.config.region()).toBe('eu-west-1');
    destroyTarget(target);
  });

  it('has no revalidation endpoint when the stack has no RevalidateUrl output', async () => {
    cfnMock.on(DescribeStacksCommand).resolves(stackWith(without('RevalidateUrl')));
    const target = await stackTarget('FaceTheoryIsr', cfn());
    expect(target.revalidateUrl).toBeUndefined();
    destroyTarget(target);
  });

  it('names the outputs a stack deployed before the CLI lacks', async () => {
    cfnMock.on(DescribeStacksCommand).resolves(stackWith(without('QueueUrl', 'OpsSettings')));
    await expect(stackTarget('FaceTheoryIsr', cfn())).rejects.toThrow(
      new TargetError(
        'stack FaceTheoryIsr lacks the outputs QueueUrl, OpsSettings: deploy this version of the stack first',
      ),
    );
  });

  it('refuses OpsSettings it cannot read', async () => {
    cfnMock
      .on(DescribeStacksCommand)
      .resolves(stackWith({ ...outputs, OpsSettings: '{"leaseSeconds":"x"}' }));
    await expect(stackTarget('FaceTheoryIsr', cfn())).rejects.toBeInstanceOf(TargetError);
  });

  it('exits 3 with the reason when the stack does not exist', async () => {
    const error = Object.assign(new Error('Stack with id Nope does not exist'), {
      name: 'ValidationError',
    });
    cfnMock.on(DescribeStacksCommand).rejects(error);
    const err: string[] = [];
    const code = await run(['stuck', '--stack', 'Nope'], {
      out: () => undefined,
      err: (text) => err.push(text),
      env: {},
      target: (stack) => stackTarget(stack ?? '', cfn()),
    });
    expect(code).toBe(3);
    expect(err.join('\n')).toMatch(/cannot read stack Nope: Stack with id Nope does not exist/);
  });

  it('names AWS_REGION when the SDK finds no region, and AWS_PROFILE when it finds no credentials', async () => {
    const stuck = async (error: Error) => {
      cfnMock.on(DescribeStacksCommand).rejects(error);
      const err: string[] = [];
      const code = await run(['stuck', '--stack', 'MySite'], {
        out: () => undefined,
        err: (text) => err.push(text),
        env: {},
        target: (stack) => stackTarget(stack ?? '', cfn()),
      });
      return { code, err: err.join('\n') };
    };
    // The SDK's own messages, which name neither (issue 35, item 10).
    const region = await stuck(new Error('Region is missing'));
    expect(region.code).toBe(3);
    expect(region.err).toMatch(/Region is missing\n {2}next: set AWS_REGION to the stack's region/);
    const credentials = await stuck(
      Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      }),
    );
    expect(credentials.err).toMatch(/next: no AWS credentials: set AWS_PROFILE/);
  });
});

describe('the local target', () => {
  it('asks whether npm start is running when there is no endpoints.json, exit code 3', async () => {
    const err: string[] = [];
    const code = await run(['inspect', '/hello'], {
      out: () => undefined,
      err: (text) => err.push(text),
      env: { ISR_LOCAL_DATA_DIR: '/nonexistent/isr-data' },
    });
    expect(code).toBe(3);
    expect(err.join('\n')).toMatch(
      /no \/nonexistent\/isr-data\/endpoints\.json: is npm start running\?/,
    );
  });
});

describe('a target whose stores cannot be reached', () => {
  it('exits 3 and asks whether npm start is still running (its backends stop with it)', async () => {
    const target = {
      kind: 'local',
      name: '/srv/isr/.local',
      region: 'us-east-1',
      clients: createAwsClients({
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
        endpoints: {
          dynamodb: 'http://127.0.0.1:1',
          s3: 'http://127.0.0.1:1',
          sqs: 'http://127.0.0.1:1',
        },
        maxAttempts: 1,
      }),
      tableName: 'isr-cache',
      settings: { allowedQueryParams: [], renderPaths: [], leaseSeconds: 30 },
    } as unknown as Target;
    const err: string[] = [];
    const code = await run(['stuck'], {
      out: () => undefined,
      err: (text) => err.push(text),
      env: {},
      target: () => Promise.resolve(target),
    });
    destroyTarget(target);
    expect(code).toBe(3);
    expect(err.join('\n')).toMatch(
      /cannot reach \/srv\/isr\/\.local's stores \(ECONNREFUSED\)\n {2}next: is npm start still running\?/,
    );
  });
});

describe('the CDN a CLI command purges', () => {
  const base = {
    clients: createAwsClients({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    }),
    tableName: 'isr-table',
    region: 'eu-west-1',
  };

  it("is the stack's CloudFront distribution, or none when the stack names none", async () => {
    const stack = cdnInvalidatorFor({ ...base, kind: 'stack', distributionId: 'E2QWRUHAPOMQZL' });
    expect(stack).toBeInstanceOf(CloudFrontInvalidator);
    const none = cdnInvalidatorFor({ ...base, kind: 'stack', distributionId: undefined });
    await expect(none.invalidateTags(['_/a'])).resolves.toEqual({ status: 'not-configured' });
  });

  it('is printed locally, where there is no CDN', async () => {
    const lines: string[] = [];
    const local = cdnInvalidatorFor({ ...base, kind: 'local', distributionId: undefined }, (line) =>
      lines.push(line),
    );
    await expect(local.invalidateTags(['_/key:abc'])).resolves.toMatchObject({
      status: 'submitted',
    });
    expect(lines).toEqual([expect.stringContaining('#_/key:abc')]);
  });

  it("prints local purge ids of its own, never npm start's local-1, local-2, ... (issue 35, item 10)", async () => {
    const lines: string[] = [];
    const local = cdnInvalidatorFor({ ...base, kind: 'local', distributionId: undefined }, (line) =>
      lines.push(line),
    );
    const purge = await local.invalidateTags(['_/key:abc']);
    const ids = purge.status === 'submitted' ? purge.invalidationIds : [];
    expect(ids).toEqual([`local-cli-${process.pid}-1`]);
    expect(lines).toEqual([`cdn purge local-cli-${process.pid}-1: #_/key:abc`]);
  });
});
