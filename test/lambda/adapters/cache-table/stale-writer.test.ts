import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoCacheTable } from '../../../../lambda/adapters/cache-table/dynamodb.js';
import { S3BodyStore } from '../../../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { CacheKey, Lease } from '../../../../lambda/core/page/model.js';
import { LeaseLostError } from '../../../../lambda/core/errors.js';
import { bodyKeyOf } from '../../../../lambda/core/page/rows.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestBucket, createTestTable, testClients } from '../../../helpers/backends.js';

const T0 = 1_800_000_000;
const LEASE = 30;
const text = (body: Uint8Array) => new TextDecoder().decode(body);

let clients: AwsClients;
let table: DynamoCacheTable;
let bodies: S3BodyStore;
let counter = 0;

beforeAll(async () => {
  clients = testClients();
  table = new DynamoCacheTable({
    client: clients.dynamodb,
    tableName: await createTestTable(clients),
  });
  bodies = new S3BodyStore({ client: clients.s3, bucket: await createTestBucket(clients) });
});
afterAll(() => {
  clients.dynamodb.destroy();
  clients.s3.destroy();
});

type BodyKeyRule = (cacheKey: CacheKey, leaseToken: string) => string;

/**
 * Worker A takes the lease, then pauses past its expiry (a GC pause, a frozen container). Worker
 * B takes the lease over, writes its body and publishes. A wakes up, believing (by its skewed
 * clock) that it still holds the lease, writes its body and tries to publish.
 */
async function pausedStaleWriter(bodyKeyFor: BodyKeyRule) {
  const cacheKey = normaliseCacheKey(
    { rawPath: `/stale-${++counter}` },
    { allowedQueryParams: [] },
  );
  const write = async (lease: Lease, generatedAt: number, content: string) => {
    const s3Key = bodyKeyFor(cacheKey, lease.token);
    const { etag } = await bodies.putBody({
      s3Key,
      body: new TextEncoder().encode(content),
      contentType: 'text/html',
    });
    return { pk: cacheKey.pk, s3Key, etag, generatedAt, revalidateSeconds: 60 };
  };

  const leaseA = await table.acquireLease({ pk: cacheKey.pk, now: T0, durationSeconds: LEASE });
  // ... A pauses here ...
  const leaseB = await table.acquireLease({
    pk: cacheKey.pk,
    now: T0 + LEASE,
    durationSeconds: LEASE,
  });
  const metaB = await write(leaseB, T0 + LEASE, 'page by B');
  await table.publishGeneration({
    observed: undefined,
    lease: leaseB,
    meta: metaB,
    now: T0 + LEASE + 1,
  });
  // ... A wakes up.
  const metaA = await write(leaseA, T0 + 1, 'page by A (stale)');
  const publishError = await table
    .publishGeneration({ observed: undefined, lease: leaseA, meta: metaA, now: T0 + 2 })
    .then(
      () => undefined,
      (error: unknown) => error,
    );

  const live = await table.getMeta(cacheKey.pk, { consistent: true });
  const liveBody = live === undefined ? undefined : await bodies.getBody(live.s3Key);
  return {
    publishError,
    live,
    liveText: liveBody === undefined ? undefined : text(liveBody.body),
    metaA,
    metaB,
  };
}

describe('a paused stale writer', () => {
  it('can replace neither META nor the body META points to', async () => {
    const outcome = await pausedStaleWriter(bodyKeyOf);
    expect(outcome.publishError).toBeInstanceOf(LeaseLostError);
    expect(outcome.live?.s3Key).toBe(outcome.metaB.s3Key);
    expect(outcome.liveText).toBe('page by B');
    // Its own body is still there, referenced by nothing, for the lifecycle to collect.
    expect(outcome.metaA.s3Key).not.toBe(outcome.metaB.s3Key);
    const orphan = await bodies.getBody(outcome.metaA.s3Key);
    expect(text(orphan.body)).toBe('page by A (stale)');
  });

  it('negative control: with one shared body key per page, it replaces the live body', async () => {
    // s3rver ignores If-None-Match on PUT (real S3 would refuse the overwrite), so this shows
    // what the unique key per render alone prevents.
    const sharedKey: BodyKeyRule = (cacheKey) => `pages/shared/${cacheKey.hash}`;
    const outcome = await pausedStaleWriter(sharedKey);
    expect(outcome.publishError).toBeInstanceOf(LeaseLostError);
    expect(outcome.live?.s3Key).toBe(outcome.metaB.s3Key);
    expect(outcome.liveText).toBe('page by A (stale)');
  });
});
