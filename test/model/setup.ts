/** A run's starting point: its id and keys, and the first key's two stale kept versions. */
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import { versionSortKey } from '../../lambda/core/page/rows.js';
import type { ModelContext } from './context.js';
import type { Interleaver } from './interleaver.js';
import { stampOf } from './tenants.js';
import { VARIANT_HEADERS } from './viewers.js';
import { LEASE_SECONDS, uniqueRunId, type World } from './world.js';

/**
 * The run's id and keys. Keys are named after the id (runs share one table), but their hashes
 * decide where they sort in a tag's index (the order a fan-out marks them): an id is drawn until
 * key n sorts n-th, each page's RSC variant right after it, so a plan replays the same way
 * whatever the id. Multi-tenant: the same paths for each tenant, the first tenant's keys first
 * (a tag's index holds one tenant's pages, so the order is asked of each tenant's alone).
 */
export function runKeys(
  count: number,
  context: ModelContext,
  tenants: readonly (string | undefined)[] = [undefined],
): { runId: string; keys: CacheKey[] } {
  const policy = context.workerConfig.keyPolicy;
  for (;;) {
    const runId = uniqueRunId();
    const pages = tenants.map((tenant) =>
      Array.from({ length: count }, (_, index) => {
        const rawPath = `/model-${runId}-k${index}`;
        const key = normaliseCacheKey({ tenant, rawPath }, policy);
        const variant = normaliseCacheKey(
          { tenant, rawPath, variantHeaders: VARIANT_HEADERS },
          context.originConfig.keyPolicy,
        );
        return { key, variant };
      }),
    );
    const sorted = (list: readonly CacheKey[]) =>
      list.every((key, index) => index === 0 || list[index - 1].pk < key.pk);
    const keys = pages.flat().map((page) => page.key);
    const eachTenant = pages.every((own) =>
      sorted(own.flatMap((page) => [page.key, page.variant])),
    );
    if (sorted(keys) && eachTenant) return { runId, keys };
  }
}

/**
 * The first key starts with two kept versions, both stale: the older one is what a planned
 * rollback goes back to. @returns generated_at of the live one
 */
export async function seed(
  world: World,
  interleaver: Interleaver,
  context: ModelContext,
  key: CacheKey,
): Promise<number> {
  const clients = world.clientsFor('seed', interleaver, { skew: 0 });
  try {
    const table = new DynamoCacheTable({
      client: clients.dynamodb,
      tableName: context.workerConfig.tableName,
    });
    const bodies = new S3BodyStore({ client: clients.s3, bucket: context.workerConfig.bucket });
    let versionSks: string[] = [];
    let generatedAt = 0;
    const now = world.trueTime;
    for (const [index, age] of [200, 100].entries()) {
      generatedAt = now - age; // stale from the start
      world.trueTime = generatedAt; // its body was written then: old enough for a sweeper
      const lease = await table.acquireLease({
        pk: key.pk,
        now: generatedAt,
        durationSeconds: LEASE_SECONDS,
      });
      const stored = await bodies.putBody({
        s3Key: `pages/${key.tenant ?? '_'}/${key.hash}/seed${index}`,
        body: new TextEncoder().encode(`seed page ${index}${stampOf(key.tenant)}`),
        contentType: 'text/html',
      });
      const currentSk = versionSortKey(generatedAt, lease.token);
      versionSks = [currentSk, ...versionSks];
      await table.publishGeneration({
        observed: undefined,
        lease,
        now: generatedAt,
        meta: {
          pk: key.pk,
          s3Key: stored.s3Key,
          etag: stored.etag,
          generatedAt,
          revalidateSeconds: 20,
          currentSk,
          versionSks,
        },
      });
    }
    world.trueTime = now;
    return generatedAt;
  } finally {
    clients.dynamodb.destroy();
    clients.s3.destroy();
  }
}
