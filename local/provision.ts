/**
 * Creates the table, bucket and queues on local backends, shaped as the CDK stack shapes them in
 * AWS. Used by `npm start`, the tests and the benchmarks.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { StatusIndex } from '../lambda/core/page/rows.js';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** The sparse status index, as the stack declares it (`lib/isr-storage.ts`). */
const STATUS_INDEX = {
  IndexName: StatusIndex.Name,
  KeySchema: [
    { AttributeName: StatusIndex.PartitionKey, KeyType: 'HASH' as const },
    { AttributeName: StatusIndex.SortKey, KeyType: 'RANGE' as const },
  ],
  Projection: { ProjectionType: 'ALL' as const },
};

/** The cache table: pk/sk strings, TTL on `ttl` (garbage collection only), the status index. */
export async function ensureCacheTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: StatusIndex.PartitionKey, AttributeType: 'S' },
          { AttributeName: StatusIndex.SortKey, AttributeType: 'N' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [STATUS_INDEX],
      }),
    );
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A table kept under .local/ from before the index existed gets it now.
    if (!Table?.GlobalSecondaryIndexes?.some((index) => index.IndexName === StatusIndex.Name)) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: [
            { AttributeName: StatusIndex.PartitionKey, AttributeType: 'S' },
            { AttributeName: StatusIndex.SortKey, AttributeType: 'N' },
          ],
          GlobalSecondaryIndexUpdates: [{ Create: STATUS_INDEX }],
        }),
      );
    }
  }
}

export async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
}

export interface RegenerationQueues {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
}

export interface QueueOptions {
  /** Base name; `.fifo` and `-dlq.fifo` are appended. */
  readonly name: string;
  /** @default 30 */
  readonly visibilityTimeoutSeconds?: number;
  /** @default 5 */
  readonly maxReceiveCount?: number;
}

/** The FIFO regeneration queue and its FIFO DLQ, with a redrive policy between them. */
export async function ensureRegenerationQueues(
  client: SQSClient,
  options: QueueOptions,
): Promise<RegenerationQueues> {
  const dlq = await createFifoQueue(client, `${options.name}-dlq.fifo`, {});
  const queue = await createFifoQueue(client, `${options.name}.fifo`, {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 30),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlq.arn,
      maxReceiveCount: options.maxReceiveCount ?? 5,
    }),
  });
  return { queueUrl: queue.url, queueArn: queue.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
}

export interface PurgeQueues {
  readonly purgeQueueUrl: string;
  readonly purgeQueueArn: string;
  readonly purgeDlqUrl: string;
  readonly purgeDlqArn: string;
}

/**
 * The purge queue and its DLQ: standard queues, as the stack makes them (a deadline purge is a
 * message delayed by `DelaySeconds`, which local-aws-sqs honours on standard queues only).
 */
export async function ensurePurgeQueues(
  client: SQSClient,
  options: QueueOptions,
): Promise<PurgeQueues> {
  const dlq = await createQueue(client, `${options.name}-dlq`, {});
  const queue = await createQueue(client, options.name, {
    VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 30),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlq.arn,
      maxReceiveCount: options.maxReceiveCount ?? 5,
    }),
  });
  return {
    purgeQueueUrl: queue.url,
    purgeQueueArn: queue.arn,
    purgeDlqUrl: dlq.url,
    purgeDlqArn: dlq.arn,
  };
}

const createFifoQueue = (client: SQSClient, name: string, attributes: Record<string, string>) =>
  createQueue(client, name, { FifoQueue: 'true', ...attributes });

async function createQueue(
  client: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<{ url: string; arn: string }> {
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
  );
  if (QueueUrl === undefined) throw new Error(`no URL for queue ${name}`);
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (arn === undefined) throw new Error(`no ARN for queue ${name}`);
  return { url: QueueUrl, arn };
}
