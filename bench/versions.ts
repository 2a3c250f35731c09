/**
 * What keeping versions (Recipe B) costs per publish: the same regenerations run twice in one
 * process, once as shipped (VER# row in the publish transaction, the dropped version's row and
 * body deleted once `keepVersions` is reached) and once as a Recipe A publish (the same code with
 * the version stripped from META before the transaction, nothing pruned). Each key is published
 * `publishesPerKey` times, so the steady state (a version dropped on every publish) is reached.
 */
import { DynamoCacheTable } from '../lambda/adapters/cache-table/dynamodb.js';
import { DynamoVersionRows } from '../lambda/adapters/version-rows/dynamodb.js';
import { S3BodyStore } from '../lambda/adapters/body-store/s3.js';
import { normaliseCacheKey } from '../lambda/core/page/cache-key.js';
import type { CacheTable, VersionRows } from '../lambda/core/page/ports.js';
import { regenerate } from '../lambda/core/regenerate/regenerate.js';
import type { RegenerateDeps } from '../lambda/core/regenerate/deps.js';
import { SETTING_DEFAULTS } from '../lambda/core/settings/index.js';
import { createAwsClients } from '../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/backends/index.js';
import { withOverrides } from '../test/helpers/overrides.js';
import { newTally, tallyDynamoDb, tallyS3, type Tally } from './capacity.js';
import { scenario, type Backends } from './fixture.js';
import { pool, round } from './stats.js';

export interface VersionsResult {
  readonly keys: number;
  readonly publishesPerKey: number;
  readonly keepVersions: number;
  readonly recipeB: PerPublish;
  readonly recipeA: PerPublish;
  /** Recipe B over Recipe A, priced WCU and time. */
  readonly wcuRatio: number;
  readonly timeRatio: number;
}

interface PerPublish {
  readonly pricedWcu: number;
  readonly pricedRcu: number;
  readonly calls: Record<string, number>;
  readonly ms: number;
}

export async function versions(
  backends: Backends,
  keys: number,
  publishesPerKey = SETTING_DEFAULTS.keepVersions + 2,
): Promise<VersionsResult> {
  const keepVersions = SETTING_DEFAULTS.keepVersions;
  const recipeB = await publishAll(backends, 'recipe-b', keys, publishesPerKey, (deps) => deps);
  const recipeA = await publishAll(backends, 'recipe-a', keys, publishesPerKey, (deps) => ({
    ...deps,
    cacheTable: recipeATable(deps.cacheTable),
    versions: { forget: () => Promise.resolve([]) } satisfies VersionRows,
  }));
  return {
    keys,
    publishesPerKey,
    keepVersions,
    recipeB,
    recipeA,
    wcuRatio: round(recipeB.pricedWcu / recipeA.pricedWcu, 2),
    timeRatio: round(recipeB.ms / recipeA.ms, 2),
  };
}

/** A publish without its version: META as a Recipe A writer puts it, no VER# row. */
function recipeATable(table: CacheTable): CacheTable {
  return withOverrides(table, {
    publishGeneration: (input) =>
      table.publishGeneration({
        ...input,
        meta: { ...input.meta, currentSk: undefined, versionSks: undefined },
      }),
  });
}

async function publishAll(
  backends: Backends,
  label: string,
  keys: number,
  publishesPerKey: number,
  shape: (deps: RegenerateDeps) => RegenerateDeps,
): Promise<PerPublish> {
  const s = await scenario(backends);
  const tally: Tally = newTally();
  const clients = createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: backends.backends.endpoints,
  });
  tallyDynamoDb(clients.dynamodb, tally);
  tallyS3(clients.s3, tally);
  try {
    const tables = { client: clients.dynamodb, tableName: s.tableName };
    const deps = shape({
      cacheTable: new DynamoCacheTable(tables),
      bodies: new S3BodyStore({ client: clients.s3, bucket: s.bucket }),
      versions: new DynamoVersionRows(tables),
      renderer: s.renderer,
      clock: s.clock,
      leaseSeconds: 30,
      renderTimeoutMs: 5_000,
      defaultRevalidateSeconds: 1,
      maxBodyBytes: 1024 * 1024,
    });
    const cacheKeys = Array.from({ length: keys }, (_, index) =>
      normaliseCacheKey({ rawPath: `/${label}-${index}` }, s.workerConfig.keyPolicy),
    );
    let ms = 0;
    for (let round = 0; round < publishesPerKey; round++) {
      const started = performance.now();
      await pool(
        `${label}: publish ${round + 1}/${publishesPerKey}`,
        cacheKeys,
        10,
        async (key) => {
          const outcome = await regenerate(deps, { cacheKey: key, need: { kind: 'intent' } });
          if (outcome.decision !== 'new')
            throw new Error(`expected a publish, got ${outcome.decision}`);
        },
      );
      ms += performance.now() - started;
      s.clock.advance(2); // every page is stale again
    }
    const publishes = keys * publishesPerKey;
    const per = (value: number) => round(value / publishes, 3);
    return {
      pricedWcu: per(tally.pricedWcu),
      pricedRcu: per(tally.pricedRcu),
      calls: Object.fromEntries(Object.entries(tally.calls).map(([name, n]) => [name, per(n)])),
      ms: round(ms, 0),
    };
  } finally {
    clients.dynamodb.destroy();
    clients.s3.destroy();
    clients.sqs.destroy();
    s.destroy();
  }
}
