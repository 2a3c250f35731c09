/**
 * Tag revalidation at scale: one tag on N published pages, revalidated at once. Measures the
 * time until the use case returns (every page is marked stale before it does, so this is both
 * the time to the 202 and the time until all pages are stale), and the DynamoDB units it spends,
 * against the same marking written as bare UpdateItem calls (no LOCK mark, no conditions).
 */
import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { keyOf, metaToItem } from '../lambda/adapters/shared/dynamodb/items.js';
import { DynamoRevalidationMarks } from '../lambda/adapters/revalidation-marks/dynamodb.js';
import { PAGE, tagPartition } from '../lambda/adapters/tag-index/dynamodb.js';
import { DynamoTagRevalidations } from '../lambda/adapters/tag-revalidations/dynamodb.js';
import { normaliseCacheKey } from '../lambda/core/cache-key.js';
import type { CdnPurge } from '../lambda/core/ports.js';
import { revalidate } from '../lambda/core/revalidate/revalidation.js';
import { createAwsClients } from '../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/backends/index.js';
import { newTally, tallyDynamoDb } from './capacity.js';
import { scenario, type Backends } from './fixture.js';
import { pool, round } from './stats.js';

export interface RevalidationResult {
  readonly pages: number;
  readonly marked: number;
  readonly staleAfter: number;
  readonly ms: number;
  readonly pagesPerSecond: number;
  readonly bareMs: number;
  readonly ratio: number;
  readonly pricedWcu: number;
  readonly readCapacity: number;
  readonly calls: Record<string, number>;
}

const TAG = 'bench';

export async function tagRevalidation(
  backends: Backends,
  pages: number,
): Promise<RevalidationResult> {
  const s = await scenario(backends);
  const tally = newTally();
  const clients = createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: backends.backends.endpoints,
  });
  tallyDynamoDb(clients.dynamodb, tally);
  try {
    const pks = await seed(s, 'isr', pages);
    const tables = { client: clients.dynamodb, tableName: s.tableName };
    const purges: string[][] = [];
    const started = performance.now();
    const effect = await revalidate(
      {
        marks: new DynamoRevalidationMarks(tables),
        tagIndex: new DynamoTagRevalidations(tables),
        queue: { enqueue: () => Promise.resolve(), enqueueBatch: () => Promise.resolve() },
        cdn: {
          invalidateTags: (tags): Promise<CdnPurge> => {
            purges.push([...tags]);
            return Promise.resolve({ status: 'not-configured' });
          },
        },
        clock: s.clock,
        deployId: 'bench',
      },
      {
        tenant: undefined,
        keys: [],
        tags: [TAG],
        mode: 'stale',
        regenerate: false,
        effectId: randomUUID(),
      },
    );
    const ms = performance.now() - started;
    const staleAfter = await countStale(s, new Set(pks));

    // Baseline: the same pages made stale with one bare UpdateItem each, as fast as the bench
    // can send them (32 at a time, like the fan-out).
    const barePks = await seed(s, 'bare', pages);
    const bareStarted = performance.now();
    await pool('bare: mark stale', barePks, 32, async (pk) => {
      await s.clients.dynamodb.send(
        new UpdateItemCommand({
          TableName: s.tableName,
          Key: keyOf(pk, 'META'),
          UpdateExpression: 'SET revalidate_seconds = :zero',
          ExpressionAttributeValues: { ':zero': { N: '0' } },
        }),
      );
    });
    const bareMs = performance.now() - bareStarted;
    return {
      pages,
      marked: effect.pages,
      staleAfter,
      ms: round(ms, 0),
      pagesPerSecond: round((pages / ms) * 1000, 0),
      bareMs: round(bareMs, 0),
      ratio: round(ms / bareMs, 2),
      pricedWcu: tally.pricedWcu,
      readCapacity: round(tally.readCapacity, 1),
      calls: tally.calls,
    };
  } finally {
    clients.dynamodb.destroy();
    s.destroy();
  }
}

/** N fresh pages under one tag: META rows and their tag index rows, written in batches. */
async function seed(s: Awaited<ReturnType<typeof scenario>>, prefix: string, pages: number) {
  const pks = Array.from(
    { length: pages },
    (_, i) => normaliseCacheKey({ rawPath: `/${prefix}-${i}` }, s.workerConfig.keyPolicy).pk,
  );
  const items = pks.flatMap((pk) => [
    metaToItem({
      pk,
      s3Key: `pages/_/${pk}/seed`,
      generatedAt: s.clock.seconds,
      revalidateSeconds: 3_600,
      tags: [TAG],
    }),
    ...(prefix === 'isr' ? [keyOf(tagPartition(undefined, TAG), `${PAGE}${pk}`)] : []),
  ]);
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) =>
    items.slice(i * 25, i * 25 + 25),
  );
  await pool(`seed ${pages} tagged pages (${prefix})`, batches, 8, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const { UnprocessedItems } = await s.clients.dynamodb.send(
        new BatchWriteItemCommand({ RequestItems: { [s.tableName]: requests } }),
      );
      requests = (UnprocessedItems?.[s.tableName] ?? []) as typeof requests;
    }
  });
  return pks;
}

async function countStale(s: Awaited<ReturnType<typeof scenario>>, pks: Set<string>) {
  let stale = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await s.clients.dynamodb.send(
      new ScanCommand({ TableName: s.tableName, ExclusiveStartKey: start }),
    );
    for (const item of page.Items ?? []) {
      if (item.sk?.S === 'META' && pks.has(item.pk?.S ?? '') && item.revalidate_seconds?.N === '0')
        stale += 1;
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return stale;
}
