/**
 * An unchanged render's refresh on DynamoDB Local: each condition that fences it without a
 * transaction refuses what it guards, and with the condition removed (`removeGuard`) the
 * violation appears. And the whole worker, counted: an unchanged intent writes 3 items after its
 * render (META, LOCK, REQ#), no transaction and no S3 PUT; a one-byte change publishes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoCacheTable } from '../../../../lambda/adapters/cache-table/dynamodb.js';
import { DynamoPageHistory } from '../../../../lambda/adapters/page-history/dynamodb.js';
import { DynamoRevalidationMarks } from '../../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { htmlPage, ModuleRenderer } from '../../../../lambda/adapters/renderer/module.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { CacheMeta } from '../../../../lambda/core/page/model.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';
import { createWorkerHarness, intentFor, message } from '../../../helpers/worker-harness.js';

const T = 1_800_000_000;

let clients: AwsClients;
let table: DynamoCacheTable;
let marks: DynamoRevalidationMarks;
let history: DynamoPageHistory;
let pages = 0;

beforeAll(async () => {
  clients = testClients();
  const tableName = await createTestTable(clients);
  table = new DynamoCacheTable({ client: clients.dynamodb, tableName });
  marks = new DynamoRevalidationMarks({ client: clients.dynamodb, tableName });
  history = new DynamoPageHistory({ client: clients.dynamodb, tableName });
});
afterAll(() => clients.dynamodb.destroy());

const freshPk = () =>
  normaliseCacheKey({ rawPath: `/refresh-${++pages}` }, { allowedQueryParams: [] }).pk;

async function published(pk: string, at: number, s3Key = `pages/_/r/${at}`): Promise<CacheMeta> {
  const observed = await table.getMeta(pk, { consistent: true });
  const lease = await table.acquireLease({ pk, now: at, durationSeconds: 30 });
  const meta = { pk, s3Key, generatedAt: at, revalidateSeconds: 60, digest: 'd' };
  await table.publishGeneration({ observed, lease, meta, now: at });
  return (await table.getMeta(pk, { consistent: true }))!;
}

const refresh = (observed: CacheMeta, generatedAt: number) =>
  table.refreshGeneration({
    observed,
    meta: { ...observed, generatedAt, unchangedRenders: 1, modifiedAt: observed.generatedAt },
  });

/** Runs `scenario` with and without `fragment`: refused with it, written without it. */
async function expectGuarded(fragment: string, scenario: () => Promise<() => Promise<void>>) {
  await expect((await scenario())()).rejects.toThrow();
  const restore = removeGuard(clients.dynamodb, fragment, ['UpdateItemCommand']);
  try {
    await expect((await scenario())()).resolves.toBeUndefined();
  } finally {
    restore();
  }
}

describe('the refresh of an unchanged generation (DynamoDB Local)', () => {
  it('sameBody: a body another render published in the same second is not refreshed', async () => {
    await expectGuarded(Guard.sameBody, async () => {
      const pk = freshPk();
      const read = await published(pk, T);
      await published(pk, T, 'pages/_/r/other');
      return () => refresh(read, T + 60);
    });
  });

  it('sameGeneration: a refresh never moves generated_at back behind a later one', async () => {
    await expectGuarded(Guard.sameGeneration, async () => {
      const pk = freshPk();
      const read = await published(pk, T);
      await refresh(read, T + 50);
      return () => refresh(read, T + 40);
    });
  });

  it('the mark: a revalidation since the render read META is never cleared by it', async () => {
    await expectGuarded(Guard.stillUnmarked, async () => {
      const pk = freshPk();
      const read = await published(pk, T);
      await marks.markStale(pk, { effectId: 'rv_1', now: T + 1 });
      return () => refresh(read, T + 60);
    });
  });

  it('notHeld: an operator’s hold since the render read META stops it', async () => {
    await expectGuarded(Guard.notHeld, async () => {
      const pk = freshPk();
      const read = await published(pk, T);
      const lease = await table.acquireLease({ pk, now: T + 1, durationSeconds: 30, seize: true });
      await history.hold({
        lease,
        now: T + 1,
        holdUntil: T + 99,
        ttl: T + 999,
        by: 'operator',
        expectedGeneratedAt: T,
      });
      return () => refresh(read, T + 60);
    });
  });
});

describe('an unchanged regeneration, counted (worker on DynamoDB Local and s3rver)', () => {
  it('writes META, LOCK and REQ# after its render, no transaction, no PUT; one byte more publishes', async () => {
    const clock = new TestClock();
    let body = '<p>the same page</p>';
    const worker = await createWorkerHarness({
      clock,
      renderer: new ModuleRenderer(() => htmlPage(body, { revalidateSeconds: 60 })),
    });
    const calls: string[] = [];
    worker.clients.dynamodb.middlewareStack.add(
      (next, context) => (args) => {
        calls.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'count-calls' },
    );
    worker.clients.s3.middlewareStack.add(
      (next, context) => (args) => {
        calls.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'count-calls' },
    );
    try {
      const deliver = async (id: string) => {
        worker.startInvocation();
        calls.splice(0);
        return processMessage(worker.deps, message(id, intentFor('/same')));
      };
      expect(await deliver('m1')).toMatchObject({ decision: 'new' });
      clock.advance(61);
      expect(await deliver('m2')).toMatchObject({ decision: 'unchanged', action: 'ack' });
      // Before the render: META read, REQ# claim, LOCK, META under the lease.
      expect(calls).toEqual([
        'GetItemCommand',
        'PutItemCommand',
        'PutItemCommand',
        'GetItemCommand',
        'UpdateItemCommand', // META's freshness
        'DeleteItemCommand', // LOCK released
        'UpdateItemCommand', // REQ# COMPLETED
      ]);
      const meta = await worker.cacheTable.getMeta(worker.keyFor('/same').pk, { consistent: true });
      expect(meta).toMatchObject({ generatedAt: clock.seconds, unchangedRenders: 1 });
      clock.advance(61);
      body = '<p>the same page!</p>';
      expect(await deliver('m3')).toMatchObject({ decision: 'new' });
      expect(calls).toContain('PutObjectCommand');
      expect(calls).toContain('TransactWriteItemsCommand');
    } finally {
      worker.destroy();
    }
  });
});
