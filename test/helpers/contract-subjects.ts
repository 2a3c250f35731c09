/**
 * What the contract suite runs against: every port a backend serves, built over one state, once
 * in memory (the unit tier) and once on the real local backend (the integration tier: DynamoDB
 * Local, s3rver, local-aws-sqs). Each contract (`test/lambda/adapters/<port>/contract.ts`) is one
 * `describe` that both runs, so a fake cannot drift from the adapter it stands for.
 */
import type { TagTimesReader } from '../../lambda/core/revalidate/tag-times.js';
import { PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type QueueAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { InMemoryBodyListing } from '../../lambda/adapters/body-listing/memory.js';
import { S3BodyListing } from '../../lambda/adapters/body-listing/s3.js';
import { DynamoBodyReferences } from '../../lambda/adapters/body-references/dynamodb.js';
import { InMemoryBodyReferences } from '../../lambda/adapters/body-references/memory.js';
import { InMemoryBodyStore } from '../../lambda/adapters/body-store/memory.js';
import { DynamoFanOutProgressRows } from '../../lambda/adapters/fan-out-progress-rows/dynamodb.js';
import { InMemoryFanOutProgressRows } from '../../lambda/adapters/fan-out-progress-rows/memory.js';
import { DynamoFanOutStarts } from '../../lambda/adapters/fan-out-starts/dynamodb.js';
import { InMemoryFanOutStarts } from '../../lambda/adapters/fan-out-starts/memory.js';
import { DynamoRevalidationsInProgress } from '../../lambda/adapters/revalidations-in-progress/dynamodb.js';
import { InMemoryRevalidationsInProgress } from '../../lambda/adapters/revalidations-in-progress/memory.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { InMemoryCacheTable } from '../../lambda/adapters/cache-table/memory.js';
import { InMemoryDeadLetterQueue } from '../../lambda/adapters/dead-letter-queue/memory.js';
import {
  SqsDeadLetterQueue,
  DeadLetterAttribute,
} from '../../lambda/adapters/dead-letter-queue/sqs.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { InMemoryPageHistory } from '../../lambda/adapters/page-history/memory.js';
import { DynamoPendingPurges } from '../../lambda/adapters/pending-purges/dynamodb.js';
import { InMemoryPendingPurges } from '../../lambda/adapters/pending-purges/memory.js';
import { InMemoryRevalidationStatuses } from '../../lambda/adapters/revalidation-statuses/memory.js';
import { DynamoRevalidationStatuses } from '../../lambda/adapters/revalidation-statuses/dynamodb.js';
import { InMemoryPurgeQueue } from '../../lambda/adapters/purge-queue/memory.js';
import { SqsPurgeQueue } from '../../lambda/adapters/purge-queue/sqs.js';
import { InMemoryRegenerationQueue } from '../../lambda/adapters/regeneration-queue/memory.js';
import { SqsRegenerationQueue } from '../../lambda/adapters/regeneration-queue/sqs.js';
import { RequestRowStore } from '../../lambda/adapters/request-store/dynamodb.js';
import { InMemoryRequestStore } from '../../lambda/adapters/request-store/memory.js';
import { DynamoRevalidationMarks } from '../../lambda/adapters/revalidation-marks/dynamodb.js';
import { InMemoryRevalidationMarks } from '../../lambda/adapters/revalidation-marks/memory.js';
import { MemoryTable } from '../../lambda/adapters/shared/memory-table.js';
import { DynamoStatusIndexReader } from '../../lambda/adapters/status-index-reader/dynamodb.js';
import { InMemoryStatusIndex } from '../../lambda/adapters/status-index-reader/memory.js';
import { DynamoSweepCursor } from '../../lambda/adapters/sweep-cursor/dynamodb.js';
import { InMemorySweepCursor } from '../../lambda/adapters/sweep-cursor/memory.js';
import { DynamoRegenerationBudget } from '../../lambda/adapters/regeneration-budget/dynamodb.js';
import { InMemoryRegenerationBudget } from '../../lambda/adapters/regeneration-budget/memory.js';
import type { RegenerationBudget } from '../../lambda/core/page/budget.js';
import { DynamoRenderCounter } from '../../lambda/adapters/render-counter/dynamodb.js';
import { InMemoryRenderCounter } from '../../lambda/adapters/render-counter/memory.js';
import { DynamoVersionRows } from '../../lambda/adapters/version-rows/dynamodb.js';
import { InMemoryVersionRows } from '../../lambda/adapters/version-rows/memory.js';
import { DynamoTagIndex } from '../../lambda/adapters/tag-index/dynamodb.js';
import { InMemoryTagIndex } from '../../lambda/adapters/tag-index/memory.js';
import { InMemoryTagRevalidations } from '../../lambda/adapters/tag-revalidations/memory.js';
import { DynamoTagRevalidations } from '../../lambda/adapters/tag-revalidations/dynamodb.js';
import type { RequestStore } from '../../lambda/core/idempotency.js';
import type {
  BodyListing,
  BodyReferences,
  PageHistory,
  PendingPurges,
  StatusIndexReader,
  StatusRow,
  SweepCursor,
} from '../../lambda/core/operate/ports.js';
import type {
  BodyStore,
  CacheTable,
  DeadLetter,
  DeadLetterQueue,
  RevalidationsInProgress,
  TagIndex,
  VersionRows,
} from '../../lambda/core/page/ports.js';
import type { RenderCounter } from '../../lambda/core/regenerate/ports.js';
import type {
  FanOutProgressRows,
  FanOutStarts,
  PurgeQueue,
  RevalidationStatuses,
  BatchRegenerationQueue,
  RevalidationMarks,
  TagRevalidations,
} from '../../lambda/core/revalidate/ports.js';
import { StatusIndex } from '../../lambda/core/page/rows.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import {
  createTestBucket,
  createTestPurgeQueues,
  createTestQueues,
  createTestTable,
  testClients,
} from './backends.js';
import { TestClock } from './clock.js';
import { TransactionConflicts } from './dynamodb-conflicts.js';

/** Every port the cache table serves, over one table. */
export interface TableSubject {
  readonly clock: TestClock;
  readonly cacheTable: CacheTable;
  readonly history: PageHistory;
  readonly versionRows: VersionRows;
  readonly renderCounter: RenderCounter;
  readonly budget: RegenerationBudget;
  readonly marks: RevalidationMarks;
  readonly tagIndex: TagIndex;
  readonly tagRevalidations: TagRevalidations & TagTimesReader;
  readonly pendingPurges: PendingPurges;
  readonly revalidationStatuses: RevalidationStatuses;
  readonly sweepCursor: SweepCursor;
  readonly references: BodyReferences;
  readonly requests: RequestStore;
  readonly statusIndex: StatusIndexReader;
  readonly inProgress: RevalidationsInProgress;
  readonly fanOutProgress: FanOutProgressRows;
  readonly fanOutStarts: FanOutStarts;
  /**
   * AWS's transaction conflict rule, when the subject follows it (`TransactionConflicts`, the
   * stand-in over DynamoDB Local): the conflict cases run only there, since DynamoDB Local
   * serialises transactions and the fakes are atomic.
   */
  readonly conflicts?: { readonly rule: TransactionConflicts; readonly tableName: string };
  /** Puts a row in the status index, as the writers of REQ#, LOCK and a broken META do. */
  indexRow(shard: string, row: StatusRow): Promise<void>;
  destroy(): void;
}

export function memoryTableSubject(): Promise<TableSubject> {
  const clock = new TestClock();
  const state = new MemoryTable();
  const statusIndex = new InMemoryStatusIndex();
  const revalidationStatuses = new InMemoryRevalidationStatuses();
  return Promise.resolve({
    clock,
    cacheTable: new InMemoryCacheTable(state),
    history: new InMemoryPageHistory(state),
    versionRows: new InMemoryVersionRows(state),
    renderCounter: new InMemoryRenderCounter(),
    budget: new InMemoryRegenerationBudget(),
    marks: new InMemoryRevalidationMarks(state),
    tagIndex: new InMemoryTagIndex(state),
    tagRevalidations: new InMemoryTagRevalidations(state),
    pendingPurges: new InMemoryPendingPurges(),
    revalidationStatuses,
    sweepCursor: new InMemorySweepCursor(),
    references: new InMemoryBodyReferences(state),
    requests: new InMemoryRequestStore(state, clock),
    statusIndex,
    inProgress: new InMemoryRevalidationsInProgress(state),
    fanOutProgress: new InMemoryFanOutProgressRows(state, revalidationStatuses),
    fanOutStarts: new InMemoryFanOutStarts(state, revalidationStatuses),
    indexRow: (shard, row) => Promise.resolve(statusIndex.add(shard, row)),
    destroy: () => undefined,
  });
}

/**
 * A fresh table on DynamoDB Local under AWS's transaction conflict rule (the stand-in,
 * `TransactionConflicts`): the adapters as deployed, meeting the conflicts DynamoDB Local hides.
 */
export const conflictingTableSubject = (): Promise<TableSubject> =>
  dynamoSubject(new TransactionConflicts());

/** A fresh table on DynamoDB Local. */
export const dynamoTableSubject = (): Promise<TableSubject> => dynamoSubject(undefined);

async function dynamoSubject(rule: TransactionConflicts | undefined): Promise<TableSubject> {
  const clock = new TestClock();
  const clients = testClients();
  rule?.attach(clients.dynamodb);
  const tableName = await createTestTable(clients);
  const table = { client: clients.dynamodb, tableName };
  return {
    clock,
    cacheTable: new DynamoCacheTable(table),
    history: new DynamoPageHistory(table),
    versionRows: new DynamoVersionRows(table),
    renderCounter: new DynamoRenderCounter(table),
    budget: new DynamoRegenerationBudget(table),
    marks: new DynamoRevalidationMarks(table),
    tagIndex: new DynamoTagIndex({ ...table, clock }),
    // Small pages, so the contract walks the cursor as the fake's pages of two make it.
    tagRevalidations: new DynamoTagRevalidations({ ...table, pageSize: 2 }),
    pendingPurges: new DynamoPendingPurges(table),
    revalidationStatuses: new DynamoRevalidationStatuses(table),
    sweepCursor: new DynamoSweepCursor(table),
    references: new DynamoBodyReferences(table),
    requests: new RequestRowStore({ ...table, clock }),
    statusIndex: new DynamoStatusIndexReader(table),
    inProgress: new DynamoRevalidationsInProgress(table),
    fanOutProgress: new DynamoFanOutProgressRows(table),
    fanOutStarts: new DynamoFanOutStarts(table),
    indexRow: (shard, row) => putIndexedRow(clients, tableName, shard, row),
    destroy: () => clients.dynamodb.destroy(),
    ...(rule === undefined ? {} : { conflicts: { rule, tableName } }),
  };
}

/** A row carrying the index's attributes, named as REQ# and LOCK rows name theirs. */
async function putIndexedRow(
  clients: AwsClients,
  tableName: string,
  shard: string,
  row: StatusRow,
): Promise<void> {
  const s = (value: string | undefined): AttributeValue | undefined =>
    value === undefined ? undefined : { S: value };
  const attributes: Record<string, AttributeValue | undefined> = {
    pk: s(row.pk),
    sk: s(row.sk),
    [StatusIndex.PartitionKey]: s(shard),
    [StatusIndex.SortKey]: { N: String(row.at) },
    locked_by: s(row.owner),
    error_code: s(row.errorCode),
    error: s(row.error),
    cache_key: s(row.cacheKey),
  };
  const Item = Object.fromEntries(
    Object.entries(attributes).filter(
      (entry): entry is [string, AttributeValue] => entry[1] !== undefined,
    ),
  );
  await clients.dynamodb.send(new PutItemCommand({ TableName: tableName, Item }));
}

/** The body ports a bucket serves, and how a test writes a body the listing then shows. */
export interface BucketSubject {
  readonly bodies: BodyStore;
  readonly listing: BodyListing;
  /** Writes an object under `s3Key`, as any writer of the bucket would. */
  write(s3Key: string): Promise<void>;
  /**
   * What the backend does not implement, so the contract leaves it out: s3rver ignores
   * `If-None-Match: *` on PUT (S3 refuses to overwrite; the memory fake does too).
   */
  readonly refusesOverwrite: boolean;
  destroy(): void;
}

export function memoryBucketSubject(prefix: string): Promise<BucketSubject> {
  const clock = new TestClock();
  const bodies = new InMemoryBodyStore();
  const listing = new InMemoryBodyListing(prefix);
  return Promise.resolve({
    bodies,
    listing,
    write: (s3Key) => {
      listing.bodies.push({ s3Key, writtenAt: clock.seconds });
      return Promise.resolve();
    },
    refusesOverwrite: true,
    destroy: () => undefined,
  });
}

/** A fresh bucket on s3rver. */
export async function s3BucketSubject(prefix: string): Promise<BucketSubject> {
  const clients = testClients();
  const bucket = await createTestBucket(clients);
  return {
    bodies: new S3BodyStore({ client: clients.s3, bucket }),
    listing: new S3BodyListing({ client: clients.s3, bucket, prefix }),
    write: async (s3Key) => {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: s3Key, Body: s3Key }));
    },
    refusesOverwrite: false,
    destroy: () => clients.s3.destroy(),
  };
}

/** A message as it arrived, read back from the queue. */
export interface Arrived {
  readonly body: string;
  readonly groupId: string | undefined;
  /** Message attributes, by name (a dead letter's reason). */
  readonly attributes: Readonly<Record<string, string | undefined>>;
}

/** The two queues a regeneration uses, and what each of them holds. */
export interface QueueSubject {
  readonly regeneration: BatchRegenerationQueue;
  readonly deadLetters: DeadLetterQueue;
  queued(): Promise<Arrived[]>;
  deadLettered(): Promise<Arrived[]>;
  destroy(): void;
}

export function memoryQueueSubject(): Promise<QueueSubject> {
  const regeneration = new InMemoryRegenerationQueue();
  const deadLetters = new InMemoryDeadLetterQueue();
  const letterOf = (letter: DeadLetter): Arrived => ({
    body: letter.body,
    groupId: letter.groupId,
    attributes: {
      [DeadLetterAttribute.Code]: letter.reason.code,
      [DeadLetterAttribute.Message]: letter.reason.message,
      [DeadLetterAttribute.SourceMessageId]: letter.messageId,
      [DeadLetterAttribute.ReceiveCount]: String(letter.receiveCount),
    },
  });
  return Promise.resolve({
    regeneration,
    deadLetters,
    queued: () =>
      Promise.resolve(
        regeneration.messages.map((queued) => ({
          body: JSON.stringify(queued.intent),
          groupId: queued.groupId,
          attributes: {},
        })),
      ),
    deadLettered: () => Promise.resolve(deadLetters.letters.map(letterOf)),
    destroy: () => undefined,
  });
}

/** A fresh FIFO queue and its DLQ on local-aws-sqs. */
export async function sqsQueueSubject(): Promise<QueueSubject> {
  const clients = testClients();
  const queues = await createTestQueues(clients);
  return {
    regeneration: new SqsRegenerationQueue({ client: clients.sqs, queueUrl: queues.queueUrl }),
    deadLetters: new SqsDeadLetterQueue({ client: clients.sqs, queueUrl: queues.dlqUrl }),
    queued: () => everyMessage(clients.sqs, queues.queueUrl),
    deadLettered: () => everyMessage(clients.sqs, queues.dlqUrl),
    destroy: () => clients.sqs.destroy(),
  };
}

/** The purge queue, what it hands out now, and how many purges it holds back (delayed). */
export interface PurgeQueueSubject {
  readonly purges: PurgeQueue;
  /** Bodies the purger may receive now. */
  visible(): Promise<string[]>;
  /** Purges still within their delay. */
  delayed(): Promise<number>;
  destroy(): void;
}

export function memoryPurgeQueueSubject(): Promise<PurgeQueueSubject> {
  const purges = new InMemoryPurgeQueue();
  return Promise.resolve({
    purges,
    visible: () => Promise.resolve(purges.visible.map((purge) => purge.body)),
    delayed: () => Promise.resolve(purges.delayed.length),
    destroy: () => undefined,
  });
}

/** A fresh purge queue (standard) on local-aws-sqs. */
export async function sqsPurgeQueueSubject(): Promise<PurgeQueueSubject> {
  const clients = testClients();
  const { purgeQueueUrl } = await createTestPurgeQueues(clients);
  return {
    purges: new SqsPurgeQueue({ client: clients.sqs, queueUrl: purgeQueueUrl }),
    visible: async () =>
      (await everyMessage(clients.sqs, purgeQueueUrl)).map((arrived) => arrived.body),
    delayed: async () => {
      const { Attributes } = await clients.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: purgeQueueUrl,
          AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
        }),
      );
      return Number(Attributes?.ApproximateNumberOfMessagesDelayed);
    },
    destroy: () => clients.sqs.destroy(),
  };
}

/** Every message on a queue, each once (received and left to its visibility timeout). */
async function everyMessage(sqs: SQSClient, queueUrl: string): Promise<Arrived[]> {
  const seen: Message[] = [];
  for (;;) {
    const { Messages } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 300,
        MessageAttributeNames: ['All'],
        AttributeNames: ['MessageGroupId' as QueueAttributeName],
      }),
    );
    const message = Messages?.[0];
    if (message === undefined || seen.some((other) => other.MessageId === message.MessageId)) {
      return seen.map((arrived) => ({
        body: arrived.Body ?? '',
        groupId: arrived.Attributes?.MessageGroupId,
        attributes: Object.fromEntries(
          Object.entries(arrived.MessageAttributes ?? {}).map(([name, value]) => [
            name,
            value.StringValue,
          ]),
        ),
      }));
    }
    seen.push(message);
  }
}
