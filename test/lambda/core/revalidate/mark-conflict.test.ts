/**
 * Found by the model check (issue 33, `npm run model-check -- 1000 33003`, run 425, with
 * transaction conflicts in its schedule): a path revalidation marks the page's META while a
 * publish's transaction on that row is ongoing. DynamoDB refuses such a single-item write
 * (`TransactionConflictException`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling)
 * and the SDK does not retry it: the revalidation threw. The marks adapter now says
 * TransactionConflictError and `markPage` retries each write with the jittered backoff.
 * DynamoDB Local serialises transactions, so the adapter's half runs through the stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoRevalidationMarks } from '../../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { keyOf } from '../../../../lambda/adapters/shared/dynamodb/items.js';
import { TransactionConflictError } from '../../../../lambda/core/errors.js';
import { SortKey } from '../../../../lambda/core/page/rows.js';
import { revalidate } from '../../../../lambda/core/revalidate/revalidation.js';
import type { RevalidationMarks } from '../../../../lambda/core/revalidate/ports.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { TransactionConflicts } from '../../../helpers/dynamodb-conflicts.js';
import { backgroundService } from '../../../helpers/fan-out.js';

let clients: AwsClients;
let tableName: string;
beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
});
afterAll(() => clients.dynamodb.destroy());

/** The marks, each of whose writes meets another writer's ongoing transaction once. */
function conflictedOnce(real: RevalidationMarks): RevalidationMarks & { conflicts: number } {
  const seen = new Set<string>();
  const once =
    <A extends unknown[], R>(name: string, write: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      if (seen.has(name)) return write.apply(real, args);
      seen.add(name);
      marks.conflicts++;
      return Promise.reject(new TransactionConflictError(`${name} conflicted (injected)`));
    };
  const marks = Object.assign(Object.create(real) as RevalidationMarks, {
    conflicts: 0,
    clearPass: once('clearPass', real.clearPass),
    markStale: once('markStale', real.markStale),
    expire: once('expire', real.expire),
  });
  return marks;
}

describe("a path revalidation's writes on the page", () => {
  it('say a conflict when a publish’s transaction holds the row (DynamoDB Local, stand-in)', async () => {
    const conflicted = testClients();
    const rule = new TransactionConflicts();
    rule.attach(conflicted.dynamodb);
    const marks = new DynamoRevalidationMarks({ client: conflicted.dynamodb, tableName });
    const pk = 'CACHE#conflicted';
    const end = rule.begin('TransactWriteItemsCommand', {
      TransactItems: [{ Put: { TableName: tableName, Item: keyOf(pk, SortKey.Meta) } }],
    });
    await expect(marks.expire(pk)).rejects.toBeInstanceOf(TransactionConflictError);
    end();
    await expect(marks.expire(pk)).resolves.toBeUndefined();
    conflicted.dynamodb.destroy();
  });

  it('are retried: the page is marked and the revalidation answers', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const marks = conflictedOnce(ctx.deps.marks);
    const effect = await revalidate(
      { ...ctx.deps, marks },
      ctx.revalidation({ keys: [ctx.keyFor('/a')], tags: [] }),
    );
    expect({ pages: effect.pages, conflicts: marks.conflicts }).toEqual({ pages: 1, conflicts: 2 });
    expect((await ctx.get('/a')).headers['cache-status'] ?? '').toMatch(/fwd=stale/);
  });
});
