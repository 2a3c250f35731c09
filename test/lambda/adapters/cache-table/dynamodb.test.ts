import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { DynamoCacheTable } from '../../../../lambda/adapters/cache-table/dynamodb.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import {
  LeaseHeldError,
  LeaseLostError,
  NewerGenerationError,
  RequestAlreadyCompletedError,
} from '../../../../lambda/core/errors.js';
import type { CacheMeta, Lease } from '../../../../lambda/core/page/model.js';
import { IndexedStatus, requestSortKey, statusShardOf } from '../../../../lambda/core/page/rows.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';

const T0 = 1_800_000_000; // a frozen clock, epoch seconds
const LEASE = 30;

let clients: AwsClients;
let tableName: string;
let table: DynamoCacheTable;
let keyCounter = 0;

beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
  table = new DynamoCacheTable({ client: clients.dynamodb, tableName });
});
afterAll(() => clients.dynamodb.destroy());

/** A fresh cache entry per test, so tests never see each other's rows. */
const freshPk = (): string =>
  normaliseCacheKey({ rawPath: `/page-${++keyCounter}` }, { allowedQueryParams: [] }).pk;

const metaFor = (
  pk: string,
  generatedAt: number,
  s3Key = `pages/_/x/${generatedAt}`,
): CacheMeta => ({
  pk,
  s3Key,
  generatedAt,
  revalidateSeconds: 60,
  etag: `"etag-${generatedAt}"`,
  contentType: 'text/html; charset=utf-8',
  statusCode: 200,
});

const rawItem = async (pk: string, sk: string) =>
  (
    await clients.dynamodb.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: pk }, sk: { S: sk } },
        ConsistentRead: true,
      }),
    )
  ).Item;

const caught = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('DynamoCacheTable lease', () => {
  it('acquires a free lease', async () => {
    const pk = freshPk();
    const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE, owner: 'w1' });
    expect(lease).toMatchObject({ pk, expiresAt: T0 + LEASE, owner: 'w1' });
    expect(lease.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(lease.takenOver).toBeUndefined();
  });

  it('refuses a held lease and names the current holder', async () => {
    const pk = freshPk();
    const first = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE, owner: 'w1' });
    const error = await caught(
      table.acquireLease({ pk, now: T0 + LEASE - 1, durationSeconds: LEASE }),
    );
    expect(error).toBeInstanceOf(LeaseHeldError);
    expect((error as LeaseHeldError).holder).toEqual({
      token: first.token,
      expiresAt: T0 + LEASE,
      owner: 'w1',
    });
  });

  it('grants an expired lease to the next contender with a new token', async () => {
    const pk = freshPk();
    const first = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    const second = await table.acquireLease({ pk, now: T0 + LEASE, durationSeconds: LEASE });
    expect(second.token).not.toBe(first.token);
    expect(second.expiresAt).toBe(T0 + 2 * LEASE);
    // the abandoned lease it replaced, so its holder's body can be retired
    expect(second.takenOver).toEqual({
      token: first.token,
      expiresAt: T0 + LEASE,
      owner: undefined,
    });
  });

  it('reports no takeover after a release or a publish ended the previous lease', async () => {
    const pk = freshPk();
    await table.releaseLease(await table.acquireLease({ pk, now: T0, durationSeconds: LEASE }));
    const afterRelease = await table.acquireLease({ pk, now: T0 + 1, durationSeconds: LEASE });
    expect(afterRelease.takenOver).toBeUndefined();
    await table.publishGeneration({
      observed: undefined,
      lease: afterRelease,
      meta: metaFor(pk, T0 + 1),
      now: T0 + 2,
    });
    const afterPublish = await table.acquireLease({ pk, now: T0 + 3, durationSeconds: LEASE });
    expect(afterPublish.takenOver).toBeUndefined();
  });

  it('extends the lease for its owner and refuses anyone else', async () => {
    const pk = freshPk();
    const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    const refreshed = await table.refreshLease(lease, { now: T0 + 20, durationSeconds: LEASE });
    expect(refreshed.expiresAt).toBe(T0 + 20 + LEASE);
    // Still held at a time the original lease would have run out.
    await expect(
      table.acquireLease({ pk, now: T0 + LEASE + 5, durationSeconds: LEASE }),
    ).rejects.toBeInstanceOf(LeaseHeldError);

    const impostor: Lease = { ...lease, token: 'not-the-token' };
    await expect(
      table.refreshLease(impostor, { now: T0 + 21, durationSeconds: LEASE }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await rawItem(pk, 'LOCK'))?.lease_expires_at).toEqual({ N: String(T0 + 20 + LEASE) });
  });

  it('refuses to refresh a lease that another contender took over', async () => {
    const pk = freshPk();
    const stale = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    const current = await table.acquireLease({ pk, now: T0 + LEASE + 1, durationSeconds: LEASE });
    await expect(
      table.refreshLease(stale, { now: T0 + LEASE + 2, durationSeconds: LEASE }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await rawItem(pk, 'LOCK'))?.lease_token).toEqual({ S: current.token });
  });

  it('releases only its own lease', async () => {
    const pk = freshPk();
    const stale = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    const current = await table.acquireLease({ pk, now: T0 + LEASE, durationSeconds: LEASE });
    expect(await table.releaseLease(stale)).toBe(false);
    expect(await rawItem(pk, 'LOCK')).toBeDefined();
    expect(await table.releaseLease(current)).toBe(true);
    expect(await rawItem(pk, 'LOCK')).toBeUndefined();
  });
});

describe('DynamoCacheTable publishGeneration', () => {
  it('commits META and removes LOCK in one step for the lease owner', async () => {
    const pk = freshPk();
    const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    await table.publishGeneration({
      observed: undefined,
      lease,
      meta: metaFor(pk, T0),
      now: T0 + 5,
    });
    expect(await table.getMeta(pk, { consistent: true })).toMatchObject(metaFor(pk, T0));
    expect(await rawItem(pk, 'LOCK')).toBeUndefined();
  });

  it('changes nothing and raises LeaseLostError after the lease expired', async () => {
    const outcome = await publishAfterExpiry();
    expect(outcome.error).toBeInstanceOf(LeaseLostError);
    expect(outcome.meta).toBeUndefined();
    expect(outcome.lockToken).toBe(outcome.lease.token);
  });

  it('changes nothing and raises LeaseLostError after another worker took the lease over', async () => {
    const outcome = await publishAfterTakeover();
    expect(outcome.error).toBeInstanceOf(LeaseLostError);
    expect((outcome.error as LeaseLostError).holder?.token).toBe(outcome.current.token);
    expect(outcome.meta).toBeUndefined();
    expect(outcome.lockToken).toBe(outcome.current.token);
  });

  it('never replaces a newer generation with an older one', async () => {
    const outcome = await publishOlderGeneration();
    expect(outcome.error).toBeInstanceOf(NewerGenerationError);
    expect((outcome.error as NewerGenerationError).currentGeneratedAt).toBe(T0 + 100);
    expect(outcome.meta?.generatedAt).toBe(T0 + 100);
    // The whole transaction was cancelled, so the lease is still there for its owner to release.
    expect(outcome.lockToken).toBe(outcome.lease.token);
  });

  it('accepts a generation equal to the live one (same-second regeneration)', async () => {
    const pk = freshPk();
    const first = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    await table.publishGeneration({
      observed: undefined,
      lease: first,
      meta: metaFor(pk, T0, 'a'),
      now: T0,
    });
    const second = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    await table.publishGeneration({
      observed: undefined,
      lease: second,
      meta: metaFor(pk, T0, 'b'),
      now: T0,
    });
    expect((await table.getMeta(pk, { consistent: true }))?.s3Key).toBe('b');
  });

  it('marks the REQ# row COMPLETED with the result in the same transaction', async () => {
    const pk = freshPk();
    await claim(pk, 'msg-1');
    const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    await table.publishGeneration({
      observed: undefined,
      lease,
      meta: metaFor(pk, T0, 'pages/_/h/result'),
      now: T0 + 1,
      seal: { idempotencyKey: 'msg-1', ttl: T0 + 86_400 },
    });
    expect(await rawItem(pk, requestSortKey('msg-1'))).toEqual({
      pk: { S: pk },
      sk: { S: 'REQ#msg-1' },
      status: { S: 'COMPLETED' },
      request_hash: { S: 'hash-of-the-request' },
      result_s3_key: { S: 'pages/_/h/result' },
      result_generated_at: { N: String(T0) },
      ttl: { N: String(T0 + 86_400) },
      outcome: { S: 'new' },
      actual_completion: { N: String(T0 + 1) },
    });
  });

  it('refuses to seal an intent that has no open claim', async () => {
    const pk = freshPk();
    const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    const error = await caught(
      table.publishGeneration({
        observed: undefined,
        lease,
        meta: metaFor(pk, T0),
        now: T0,
        seal: { idempotencyKey: 'none', ttl: T0 },
      }),
    );
    expect(error).toBeInstanceOf(RequestAlreadyCompletedError);
    expect(await rawItem(pk, 'META')).toBeUndefined();
  });

  it('refuses a second publish of an intent another delivery already completed', async () => {
    const outcome = await publishCompletedIntentAgain();
    expect(outcome.error).toBeInstanceOf(RequestAlreadyCompletedError);
    expect(outcome.meta?.s3Key).toBe('first');
    expect(outcome.lockToken).toBe(outcome.second.token); // cancelled whole: the lease is still its own
  });

  it('leaves the REQ# row alone when the publish is refused', async () => {
    const pk = freshPk();
    await claim(pk, 'msg-2');
    const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
    await expect(
      table.publishGeneration({
        observed: undefined,
        lease,
        meta: metaFor(pk, T0),
        now: T0 + LEASE,
        seal: { idempotencyKey: 'msg-2', ttl: T0 + 86_400 },
      }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await rawItem(pk, requestSortKey('msg-2')))?.status).toEqual({ S: 'STARTED' });
  });
});

describe('DynamoCacheTable rows', () => {
  it('writes META and LOCK with the exact FaceTheory attribute names and types', async () => {
    const pk = freshPk();
    const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE, owner: 'w1' });
    expect(await rawItem(pk, 'LOCK')).toEqual({
      pk: { S: pk },
      sk: { S: 'LOCK' },
      lease_token: { S: lease.token },
      lease_expires_at: { N: String(T0 + LEASE) },
      ttl: { N: String(T0 + LEASE + 7 * 86_400) }, // kept a week past expiry: see lockTtlBufferSeconds
      lease_owner: { S: 'w1' },
      status_shard: { S: statusShardOf(IndexedStatus.Lease, pk) },
      status_at: { N: String(T0 + LEASE) },
    });
    await table.publishGeneration({
      observed: undefined,
      lease,
      meta: { ...metaFor(pk, T0, 'pages/_/h/1'), ttl: T0 + 7 * 86_400, cacheKey: '/page' },
      now: T0 + 1,
    });
    expect(await rawItem(pk, 'META')).toEqual({
      pk: { S: pk },
      sk: { S: 'META' },
      s3_key: { S: 'pages/_/h/1' },
      generated_at: { N: String(T0) },
      revalidate_seconds: { N: '60' },
      etag: { S: `"etag-${T0}"` },
      ttl: { N: String(T0 + 7 * 86_400) },
      cache_key: { S: '/page' },
      content_type: { S: 'text/html; charset=utf-8' },
      status_code: { N: '200' },
    });
  });

  it('reads META eventually or strongly consistent and returns undefined when absent', async () => {
    const pk = freshPk();
    expect(await table.getMeta(pk)).toBeUndefined();
    expect(await table.getMeta(pk, { consistent: true })).toBeUndefined();
  });
});

describe('DynamoCacheTable guards (negative controls)', () => {
  // The scenarios above, run again with one guard removed from the wire: each must now show the
  // violation, proving the assertions above would catch the missing guard.
  it('without the token condition, a stale writer with a skewed clock overwrites META', async () => {
    const outcome = await withoutGuard(Guard.leaseToken, publishAfterTakeover);
    expect(outcome.error).toBeUndefined();
    expect(outcome.meta).toBeDefined();
  });

  it('without the expiry condition, a writer whose lease ran out still publishes', async () => {
    const outcome = await withoutGuard(Guard.leaseLive, publishAfterExpiry);
    expect(outcome.error).toBeUndefined();
    expect(outcome.meta).toBeDefined();
  });

  it('without the newer-generation condition, an older generation replaces a newer one', async () => {
    const outcome = await withoutGuard(Guard.notNewerGeneration, publishOlderGeneration);
    expect(outcome.error).toBeUndefined();
    expect(outcome.meta?.generatedAt).toBe(T0 + 50);
  });

  it('without the free-lease condition, a second contender takes a held lease', async () => {
    const outcome = await withoutGuard(Guard.leaseFree, acquireHeldLease);
    expect(outcome.error).toBeUndefined();
  });

  it('without the open-request condition, a completed intent is published a second time', async () => {
    const outcome = await withoutGuard(Guard.requestOpen, publishCompletedIntentAgain);
    expect(outcome.error).toBeUndefined();
    expect(outcome.meta?.s3Key).toBe('second');
  });

  it('with every guard in place, the same contender is refused', async () => {
    expect((await acquireHeldLease()).error).toBeInstanceOf(LeaseHeldError);
  });
});

// Scenarios shared by the tests and their negative controls.

async function withoutGuard<T>(fragment: string, scenario: () => Promise<T>): Promise<T> {
  const restore = removeGuard(clients.dynamodb, fragment);
  try {
    return await scenario();
  } finally {
    restore();
  }
}

const lockTokenOf = async (pk: string) => (await rawItem(pk, 'LOCK'))?.lease_token?.S;

async function publishAfterExpiry() {
  const pk = freshPk();
  const lease = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
  const error = await caught(
    table.publishGeneration({ observed: undefined, lease, meta: metaFor(pk, T0), now: T0 + LEASE }),
  );
  return {
    error,
    lease,
    meta: await table.getMeta(pk, { consistent: true }),
    lockToken: await lockTokenOf(pk),
  };
}

/** The stale worker's clock is behind: by its own reckoning its lease is still live. */
async function publishAfterTakeover() {
  const pk = freshPk();
  const stale = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
  const current = await table.acquireLease({ pk, now: T0 + LEASE, durationSeconds: LEASE });
  const error = await caught(
    table.publishGeneration({
      observed: undefined,
      lease: stale,
      meta: metaFor(pk, T0),
      now: T0 + 1,
    }),
  );
  return {
    error,
    current,
    meta: await table.getMeta(pk, { consistent: true }),
    lockToken: await lockTokenOf(pk),
  };
}

async function publishOlderGeneration() {
  const pk = freshPk();
  const first = await table.acquireLease({ pk, now: T0 + 100, durationSeconds: LEASE });
  await table.publishGeneration({
    observed: undefined,
    lease: first,
    meta: metaFor(pk, T0 + 100),
    now: T0 + 101,
  });
  const lease = await table.acquireLease({ pk, now: T0 + 102, durationSeconds: LEASE });
  const error = await caught(
    table.publishGeneration({
      observed: undefined,
      lease,
      meta: metaFor(pk, T0 + 50),
      now: T0 + 103,
    }),
  );
  return {
    error,
    lease,
    meta: await table.getMeta(pk, { consistent: true }),
    lockToken: await lockTokenOf(pk),
  };
}

/** An open REQ# claim, as the idempotency layer writes it. */
async function claim(pk: string, idempotencyKey: string) {
  await clients.dynamodb.send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        pk: { S: pk },
        sk: { S: requestSortKey(idempotencyKey) },
        status: { S: 'STARTED' },
        request_hash: { S: 'hash-of-the-request' },
      },
    }),
  );
}

/** Two deliveries of one intent: the first publishes and seals REQ#, then the second tries. */
async function publishCompletedIntentAgain() {
  const pk = freshPk();
  const seal = { idempotencyKey: `m-${pk.slice(-8)}`, ttl: T0 + 86_400 };
  await claim(pk, seal.idempotencyKey);
  const first = await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
  await table.publishGeneration({
    observed: undefined,
    lease: first,
    meta: metaFor(pk, T0, 'first'),
    now: T0,
    seal,
  });
  const second = await table.acquireLease({ pk, now: T0 + 1, durationSeconds: LEASE });
  const error = await caught(
    table.publishGeneration({
      observed: undefined,
      lease: second,
      meta: metaFor(pk, T0 + 1, 'second'),
      now: T0 + 1,
      seal,
    }),
  );
  return {
    error,
    second,
    meta: await table.getMeta(pk, { consistent: true }),
    lockToken: await lockTokenOf(pk),
  };
}

async function acquireHeldLease() {
  const pk = freshPk();
  await table.acquireLease({ pk, now: T0, durationSeconds: LEASE });
  return { error: await caught(table.acquireLease({ pk, now: T0 + 1, durationSeconds: LEASE })) };
}

describe('DynamoCacheTable failure record', () => {
  const publishAt = async (pk: string, generatedAt: number) => {
    const lease = await table.acquireLease({ pk, now: generatedAt, durationSeconds: LEASE });
    await table.publishGeneration({
      observed: undefined,
      lease,
      meta: metaFor(pk, generatedAt),
      now: generatedAt,
    });
  };
  const record = (count: number) => ({
    count,
    lastFailedAt: T0 + 100,
    nextAttemptAt: T0 + 115,
    error: 'render-failed: renderer answered 503',
  });
  const failure = (pk: string, observedGeneratedAt: number, previousCount: number, count = 1) =>
    table.recordFailure({ pk, observedGeneratedAt, previousCount, record: record(count) });

  it('keeps the failure beside the FaceTheory attributes of META, which it leaves alone', async () => {
    const pk = freshPk();
    await publishAt(pk, T0);
    const before = await rawItem(pk, 'META');
    expect(await failure(pk, T0, 0)).toBe(true);
    expect(await rawItem(pk, 'META')).toEqual({
      ...before,
      regen_failures: { N: '1' },
      regen_failed_at: { N: String(T0 + 100) },
      regen_next_at: { N: String(T0 + 115) },
      regen_error: { S: 'render-failed: renderer answered 503' },
    });
    expect((await table.getMeta(pk, { consistent: true }))?.failures).toEqual(record(1));
  });

  it('records nothing once META holds another generation', async () => {
    const pk = freshPk();
    await publishAt(pk, T0);
    await publishAt(pk, T0 + 50);
    expect(await failure(pk, T0, 0)).toBe(false);
    expect((await table.getMeta(pk, { consistent: true }))?.failures).toBeUndefined();
  });

  it('negative control: without the generation condition, a newer page inherits the old failure', async () => {
    const pk = freshPk();
    await publishAt(pk, T0);
    await publishAt(pk, T0 + 50);
    const restore = removeGuard(clients.dynamodb, Guard.sameGeneration);
    try {
      expect(await failure(pk, T0, 0)).toBe(true);
    } finally {
      restore();
    }
  });

  it('records nothing when another delivery recorded a failure since the count was read', async () => {
    const pk = freshPk();
    await publishAt(pk, T0);
    expect(await failure(pk, T0, 0)).toBe(true);
    expect(await failure(pk, T0, 0)).toBe(false);
    expect(await failure(pk, T0, 1, 2)).toBe(true);
    expect((await table.getMeta(pk, { consistent: true }))?.failures?.count).toBe(2);
  });

  it('never creates a META (a failure of a page nobody published is not recorded)', async () => {
    const pk = freshPk();
    expect(await failure(pk, T0, 0)).toBe(false);
    expect(await rawItem(pk, 'META')).toBeUndefined();
  });

  it('is cleared by the next publish', async () => {
    const pk = freshPk();
    await publishAt(pk, T0);
    await failure(pk, T0, 0);
    await publishAt(pk, T0 + 60);
    expect((await table.getMeta(pk, { consistent: true }))?.failures).toBeUndefined();
  });
});
