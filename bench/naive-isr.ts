/**
 * The baseline the storm is measured against: stale-while-revalidate with no lease and no
 * dedupe. Every stale hit queues its own message, and the worker renders and overwrites META for
 * each one, unconditionally.
 */
import { randomUUID } from 'node:crypto';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { metaToItem } from '../lambda/adapters/shared/dynamodb/items.js';
import { normaliseCacheKey } from '../lambda/core/page/cache-key.js';
import { parseIntent } from '../lambda/core/page/intent.js';
import type { RegenerationQueue } from '../lambda/core/page/ports.js';
import { renderAndStoreBare, type Scenario } from './fixture.js';

/** A queue that never collapses: every enqueue gets its own deduplication ID. */
export const undedupedQueue = (queue: RegenerationQueue): RegenerationQueue => ({
  enqueue: (intent, options) =>
    queue.enqueue(intent, { ...options, deduplicationId: randomUUID() }),
});

/** Renders and publishes every message it gets. */
export function naiveWorker(s: Scenario) {
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    await Promise.all(
      event.Records.map(async (record) => {
        const intent = parseIntent(record.body);
        const cacheKey = normaliseCacheKey(
          { rawPath: intent.path, rawQueryString: intent.query },
          s.originConfig.keyPolicy,
        );
        const meta = await renderAndStoreBare(s, cacheKey);
        await s.clients.dynamodb.send(
          new PutItemCommand({ TableName: s.tableName, Item: metaToItem(meta) }),
        );
      }),
    );
    return { batchItemFailures: [] };
  };
}
