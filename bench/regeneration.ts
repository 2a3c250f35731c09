/**
 * Regeneration cost: what one regeneration costs in DynamoDB capacity and calls, and how fast the
 * worker regenerates 1,000 stale keys compared with issuing the same writes as bare SDK calls
 * (no reads, no conditions, no idempotency library, no render).
 */
import { randomUUID } from 'node:crypto';
import { PutItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import {
  keyOf,
  leaseToItem,
  metaToItem,
  versionToItem,
} from '../lambda/adapters/shared/dynamodb/items.js';
import { requestSortKey, versionSortKey } from '../lambda/core/rows.js';
import { normaliseCacheKey, type CacheKey } from '../lambda/core/cache-key.js';
import { encodeIntent } from '../lambda/core/intent.js';
import { createAwsClients, type AwsClients } from '../lambda/shared/aws-clients.js';
import { createWorkerDeps } from '../lambda/worker/build.js';
import { processMessage } from '../lambda/core/regenerate/process-message.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/backends/index.js';
import { lambdaContext } from '../local/worker-poller.js';
import { newTally, tallyDynamoDb, tallyS3, type Tally } from './capacity.js';
import { renderAndStoreBare, scenario, type Backends, type Scenario } from './fixture.js';
import { pool, round } from './stats.js';

export interface RegenerationResult {
  readonly keys: number;
  readonly concurrency: number;
  readonly perRegeneration: {
    readonly calls: Record<string, number>;
    readonly pricedWcu: number;
    readonly pricedRcu: number;
    readonly localCapacity: number;
  };
  readonly isr: { readonly ms: number; readonly perSecond: number };
  readonly bare: { readonly ms: number; readonly perSecond: number };
  readonly ratio: number;
  readonly decisions: Record<string, number>;
}

export async function regeneration(
  backends: Backends,
  keys: number,
  concurrency: number,
): Promise<RegenerationResult> {
  const s = await scenario(backends);
  const tally = newTally();
  const tallied = talliedClients(backends, tally);
  try {
    const seedGeneratedAt = s.clock.seconds - 100;
    const isrKeys = await seedStaleKeys(s, 'isr', keys, seedGeneratedAt);
    const deps = createWorkerDeps(
      s.workerConfig,
      { clients: tallied, clock: s.clock, renderer: s.renderer },
      { warn: () => undefined },
    );
    deps.idempotency.config.registerLambdaContext(lambdaContext(60_000));
    const decisions: Record<string, number> = {};
    const isrStarted = performance.now();
    await pool(`regenerate ${keys} keys (worker)`, isrKeys, concurrency, async (cacheKey) => {
      const body = encodeIntent({
        v: 1,
        path: cacheKey.path,
        query: '',
        deployId: 'bench',
        observedGeneratedAt: seedGeneratedAt,
      });
      const report = await processMessage(deps, {
        messageId: randomUUID(),
        body,
        receiveCount: 1,
        groupId: 'g',
      });
      decisions[report.decision] = (decisions[report.decision] ?? 0) + 1;
    });
    const isrMs = performance.now() - isrStarted;

    const bareKeys = await seedStaleKeys(s, 'bare', keys, seedGeneratedAt);
    const bareStarted = performance.now();
    await pool(`same writes, bare SDK calls`, bareKeys, concurrency, (cacheKey) =>
      sameWrites(s, cacheKey),
    );
    const bareMs = performance.now() - bareStarted;

    const per = (value: number) => round(value / keys, 3);
    return {
      keys,
      concurrency,
      perRegeneration: {
        calls: Object.fromEntries(
          Object.entries(tally.calls).map(([name, count]) => [name, per(count)]),
        ),
        pricedWcu: per(tally.pricedWcu),
        pricedRcu: per(tally.pricedRcu),
        localCapacity: per(tally.localCapacity),
      },
      isr: { ms: round(isrMs, 0), perSecond: round((keys / isrMs) * 1000, 1) },
      bare: { ms: round(bareMs, 0), perSecond: round((keys / bareMs) * 1000, 1) },
      ratio: round(isrMs / bareMs, 2),
      decisions,
    };
  } finally {
    tallied.dynamodb.destroy();
    tallied.s3.destroy();
    tallied.sqs.destroy();
    s.destroy();
  }
}

function talliedClients(backends: Backends, tally: Tally): AwsClients {
  const clients = createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: backends.backends.endpoints,
  });
  tallyDynamoDb(clients.dynamodb, tally);
  tallyS3(clients.s3, tally);
  return clients;
}

/** Each key gets a published generation that is already stale. */
async function seedStaleKeys(
  s: Scenario,
  prefix: string,
  keys: number,
  generatedAt: number,
): Promise<CacheKey[]> {
  const cacheKeys = Array.from({ length: keys }, (_, index) =>
    normaliseCacheKey({ rawPath: `/${prefix}-${index}` }, s.workerConfig.keyPolicy),
  );
  await pool(`seed ${keys} stale keys (${prefix})`, cacheKeys, 20, async (cacheKey) => {
    const s3Key = `pages/_/${cacheKey.hash}/seed`;
    await s.clients.s3.send(
      new PutObjectCommand({
        Bucket: s.bucket,
        Key: s3Key,
        Body: 'seed',
        ContentType: 'text/html',
      }),
    );
    await s.clients.dynamodb.send(
      new PutItemCommand({
        TableName: s.tableName,
        Item: {
          pk: { S: cacheKey.pk },
          sk: { S: 'META' },
          s3_key: { S: s3Key },
          generated_at: { N: String(generatedAt) },
          revalidate_seconds: { N: '60' },
        },
      }),
    );
  });
  return cacheKeys;
}

/**
 * The writes one regeneration makes, issued directly with the service's own row shapes: REQ#,
 * LOCK, body, the publish transaction with its version row (unconditioned). The previous body
 * is a kept version: nothing retires it.
 */
async function sameWrites(s: Scenario, cacheKey: CacheKey): Promise<void> {
  const now = s.clock.seconds;
  const request = requestSortKey(randomUUID());
  const lease = { pk: cacheKey.pk, token: randomUUID(), expiresAt: now + 30 };
  await s.clients.dynamodb.send(
    new PutItemCommand({
      TableName: s.tableName,
      Item: {
        ...keyOf(cacheKey.pk, request),
        status: { S: 'STARTED' },
        ttl: { N: String(now + 86_400) },
        request_hash: { S: lease.token },
      },
    }),
  );
  await s.clients.dynamodb.send(
    new PutItemCommand({
      TableName: s.tableName,
      Item: leaseToItem(lease, lease.expiresAt + 3600),
    }),
  );
  const rendered = await renderAndStoreBare(s, cacheKey);
  const currentSk = versionSortKey(rendered.generatedAt, lease.token);
  const meta = { ...rendered, currentSk, versionSks: [currentSk] };
  await s.clients.dynamodb.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        { Put: { TableName: s.tableName, Item: metaToItem(meta) } },
        { Put: { TableName: s.tableName, Item: versionToItem(meta) } },
        { Delete: { TableName: s.tableName, Key: keyOf(cacheKey.pk, 'LOCK') } },
        {
          Update: {
            TableName: s.tableName,
            Key: keyOf(cacheKey.pk, request),
            UpdateExpression: 'SET #status = :completed, result_s3_key = :s3_key',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':completed': { S: 'COMPLETED' },
              ':s3_key': { S: meta.s3Key },
            },
          },
        },
      ],
    }),
  );
}
