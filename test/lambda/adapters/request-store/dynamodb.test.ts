import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Claim } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { RequestRowStore } from '../../../../lambda/adapters/request-store/dynamodb.js';
import type { IdempotentCall } from '../../../../lambda/core/idempotency.js';
import { IndexedStatus, statusShardOf } from '../../../../lambda/core/page/rows.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createIdempotencyConfig } from '../../../../lambda/core/idempotency.js';
import { TestClock } from '../../../helpers/clock.js';
import { fixedContext } from '../../../helpers/memory-service.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';

let clients: AwsClients;
let tableName: string;
let counter = 0;
const clock = new TestClock();

beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
});
afterAll(() => clients.dynamodb.destroy());

/** A store as one worker instance holds it: Powertools configures it on first use. */
function store(): RequestRowStore {
  const instance = new RequestRowStore({ client: clients.dynamodb, tableName, clock });
  const config = createIdempotencyConfig(3_600);
  config.registerLambdaContext(fixedContext(30_000, 'isr-worker'));
  instance.configure({ config });
  return instance;
}

const payload = (): IdempotentCall => ({
  key: `msg-${++counter}`,
  pk: `CACHE#req-store-${counter}`,
  request: { tenant: null, cacheKey: `/p/${counter}`, deployId: 'd1' },
});

const row = async (data: IdempotentCall) =>
  (
    await clients.dynamodb.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: data.pk }, sk: { S: `REQ#${data.key}` } },
        ConsistentRead: true,
      }),
    )
  ).Item;

describe('RequestRowStore', () => {
  it('claims an intent as a FaceTheory REQ# row in the cache key partition, timed on the clock', async () => {
    const data = payload();
    await store().saveInProgress(data, 30_000);
    expect(await row(data)).toEqual({
      pk: { S: data.pk },
      sk: { S: `REQ#${data.key}` },
      status: { S: 'STARTED' },
      request_hash: { S: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/) as unknown as string },
      ttl: { N: String(clock.seconds + 3_600) },
      in_progress_expires_at_ms: { N: String(clock.now() + 30_000) },
      claim_token: { S: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown as string },
      created_at: { N: String(clock.seconds) },
      expected_completion: { N: String(clock.seconds + 30) },
      locked_by: { S: 'isr-worker/request-1' },
      request: { S: '{"cacheKey":"/p/' + String(counter) + '","deployId":"d1","tenant":null}' },
      status_shard: { S: statusShardOf(IndexedStatus.Started, data.pk) },
      status_at: { N: String(clock.seconds + 30) },
    });
  });

  it('refuses a second claim while the first is in progress', async () => {
    const data = payload();
    await store().saveInProgress(data, 30_000);
    await expect(store().saveInProgress(data, 30_000)).rejects.toMatchObject({
      name: 'IdempotencyItemAlreadyExistsError',
    });
  });

  it('releases a claim after its own failure, so a retry can take the intent', async () => {
    const data = payload();
    const worker = store();
    await worker.saveInProgress(data, 30_000);
    await worker.deleteRecord(data);
    expect(await row(data)).toBeUndefined();
  });

  it('never releases a claim that a duplicate took over after its own ran out', async () => {
    const { rowAfter, takeover } = await failAfterTakeover();
    expect(rowAfter?.claim_token).toEqual(takeover?.claim_token);
    expect(rowAfter?.status).toEqual({ S: 'STARTED' });
  });

  it('negative control: without the own-claim condition, the late failure deletes the other claim', async () => {
    const restore = removeGuard(clients.dynamodb, Claim.ownOpen);
    try {
      const { rowAfter } = await failAfterTakeover();
      expect(rowAfter).toBeUndefined();
    } finally {
      restore();
    }
  });
});

/** A claims with 50 ms left and outlives it; B takes the claim over; then A fails. */
async function failAfterTakeover() {
  const data = payload();
  const slow = store();
  await slow.saveInProgress(data, 50);
  clock.advance(1);
  await store().saveInProgress(data, 30_000);
  const takeover = await row(data);
  await slow.deleteRecord(data);
  return { rowAfter: await row(data), takeover };
}
