/**
 * 404 floods stay cheap (issue 36, item 4), on DynamoDB Local and s3rver: a gone path's small 404
 * is one row (`META#GONE`) written under the lease, with the lease's condition proved by a
 * negative control; the worker, counted, writes no body object for it, and one byte over the
 * setting's size publishes it as a page.
 */
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoCacheTable } from '../../../../lambda/adapters/cache-table/dynamodb.js';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { htmlPage, ModuleRenderer } from '../../../../lambda/adapters/renderer/module.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';
import { createWorkerHarness, intentFor, message } from '../../../helpers/worker-harness.js';

const T = 1_800_000_000;

let clients: AwsClients;
let table: DynamoCacheTable;
let pages = 0;

beforeAll(async () => {
  clients = testClients();
  table = new DynamoCacheTable({
    client: clients.dynamodb,
    tableName: await createTestTable(clients),
  });
});
afterAll(() => clients.dynamodb.destroy());

const freshPk = () =>
  normaliseCacheKey({ rawPath: `/gone-${++pages}` }, { allowedQueryParams: [] }).pk;

const goneRow = (pk: string) => ({
  pk,
  generatedAt: T,
  revalidateSeconds: 60,
  statusCode: 404,
  contentType: 'text/html',
  body: new TextEncoder().encode('not here'),
  etag: '"g"',
});

describe('a gone path’s row (DynamoDB Local)', () => {
  it('leaseToken: the row of a lease another holder took over is written only without the guard', async () => {
    const scenario = async () => {
      const pk = freshPk();
      const lease = await table.acquireLease({ pk, now: T, durationSeconds: 30, owner: 'a' });
      await table.acquireLease({ pk, now: T + 30, durationSeconds: 30, owner: 'b' });
      return () => table.storeGone({ lease, gone: goneRow(pk), now: T + 31 });
    };
    await expect((await scenario())()).rejects.toThrow();
    const restore = removeGuard(clients.dynamodb, Guard.leaseToken, ['Delete']);
    try {
      await expect((await scenario())()).resolves.toBeUndefined();
    } finally {
      restore();
    }
  });
});

describe('a 404 flood, counted (worker on DynamoDB Local and s3rver)', () => {
  it('keeps a small 404 in one row, no body object and no version; one byte over publishes a page', async () => {
    const clock = new TestClock();
    let body = 'x'.repeat(64);
    const worker = await createWorkerHarness({
      clock,
      renderer: new ModuleRenderer(() => htmlPage(body, { status: 404, revalidateSeconds: 60 })),
      env: { ISR_GONE_INLINE_MAX_BYTES: '64' },
    });
    const calls: string[] = [];
    const count =
      (next: (args: unknown) => unknown, context: { commandName?: string }) => (args: unknown) => (
        calls.push(context.commandName ?? '?'),
        next(args)
      );
    worker.clients.dynamodb.middlewareStack.add(count as never, { step: 'initialize' });
    worker.clients.s3.middlewareStack.add(count as never, { step: 'initialize' });
    const rowsOf = async (path: string) => {
      const { Items = [] } = await worker.clients.dynamodb.send(
        new QueryCommand({
          TableName: worker.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: worker.keyFor(path).pk } },
        }),
      );
      return Items.map((item) => item.sk?.S?.replace(/#.*$/, '#'));
    };
    try {
      worker.startInvocation();
      expect(
        await processMessage(worker.deps, message('m1', intentFor('/nowhere-1'))),
      ).toMatchObject({ decision: 'gone', action: 'ack' });
      expect(calls).not.toContain('PutObjectCommand');
      expect(await rowsOf('/nowhere-1')).toEqual(['META#', 'REQ#']);
      const page = await worker.cacheTable.readPage(worker.keyFor('/nowhere-1').pk);
      expect(page).toMatchObject({ meta: undefined, gone: { statusCode: 404 } });
      expect(new TextDecoder().decode(page.gone?.body)).toBe(body);
      body += 'x';
      calls.splice(0);
      worker.startInvocation();
      expect(
        await processMessage(worker.deps, message('m2', intentFor('/nowhere-2'))),
      ).toMatchObject({ decision: 'new' });
      expect(calls).toContain('PutObjectCommand');
      expect(await rowsOf('/nowhere-2')).toEqual(['META', 'REQ#', 'VER#']);
    } finally {
      worker.destroy();
    }
  });
});
