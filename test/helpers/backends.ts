import { randomUUID } from 'node:crypto';
import { createAwsClients, type AwsClients } from '../../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import {
  ensureBucket,
  ensureCacheTable,
  ensurePurgeQueues,
  ensureRegenerationQueues,
  type PurgeQueues,
  type QueueOptions,
  type RegenerationQueues,
} from '../../local/provision.js';

const endpoint = (name: string): string => {
  const value = process.env[name];
  if (value === undefined)
    throw new Error(`${name} is unset: run the tests through jest's globalSetup`);
  return value;
};

/** SDK clients pointed at the backends started by the global setup. */
export function testClients(): AwsClients {
  return createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: {
      dynamodb: endpoint('ISR_TEST_DYNAMODB_ENDPOINT'),
      s3: endpoint('ISR_TEST_S3_ENDPOINT'),
      sqs: endpoint('ISR_TEST_SQS_ENDPOINT'),
    },
  });
}

const uniqueName = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A fresh cache table (pk/sk, TTL on `ttl`), so test files never share state. */
export async function createTestTable(clients: AwsClients): Promise<string> {
  const name = uniqueName('isr-test');
  await ensureCacheTable(clients.dynamodb, name);
  return name;
}

export async function createTestBucket(clients: AwsClients): Promise<string> {
  const name = uniqueName('isr-test');
  await ensureBucket(clients.s3, name);
  return name;
}

export async function createTestQueues(
  clients: AwsClients,
  options: Partial<QueueOptions> = {},
): Promise<RegenerationQueues> {
  return ensureRegenerationQueues(clients.sqs, { name: uniqueName('isr-test'), ...options });
}

/** A fresh purge queue and its DLQ (standard queues, as the stack makes them). */
export async function createTestPurgeQueues(
  clients: AwsClients,
  options: Partial<QueueOptions> = {},
): Promise<PurgeQueues> {
  return ensurePurgeQueues(clients.sqs, { name: uniqueName('isr-test-purge'), ...options });
}
