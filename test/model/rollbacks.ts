/** Operators as model-check actors: a rollback of the first key, maybe holding it. */
import { DynamoCacheTable } from '../../lambda/adapters/cache-table/dynamodb.js';
import { DynamoPageHistory } from '../../lambda/adapters/page-history/dynamodb.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import { IsrError } from '../../lambda/core/errors.js';
import { rollback } from '../../lambda/core/operate/rollback.js';
import type { Actors, RunScope } from './actors.js';
import { HOLD_SECONDS } from './context.js';
import type { RollbackPlan } from './plan.js';
import { LEASE_SECONDS } from './world.js';
import { isConflict } from './writers.js';

/** Starts the plan's rollbacks (`r<n>`). @returns their actor names */
export function startRollbacks(
  scope: RunScope,
  actors: Actors,
  key: CacheKey,
  plans: readonly RollbackPlan[],
): string[] {
  const { workerConfig } = scope.context;
  return plans.map((rollbackPlan, index) => {
    const actor = `r${index}`;
    const clients = actors.clientsOf(actor, { skew: rollbackPlan.skew });
    const tables = { client: clients.dynamodb, tableName: workerConfig.tableName };
    const deps = {
      cacheTable: new DynamoCacheTable(tables),
      history: new DynamoPageHistory(tables),
      bodies: new S3BodyStore({ client: clients.s3, bucket: workerConfig.bucket }),
      clock: scope.world.clockFor(rollbackPlan.skew),
      leaseSeconds: LEASE_SECONDS,
    };
    void scope.interleaver.start(actor, () =>
      rollback(deps, {
        cacheKey: key,
        holdSeconds: rollbackPlan.hold ? HOLD_SECONDS : undefined,
        actor,
      }).catch((error: unknown) => {
        // Refused (META changed, the lease was taken, nothing older): nothing was written. Or
        // one of its writes met a transaction in flight: the command fails, run again by hand.
        if (error instanceof IsrError || isConflict(error)) return undefined;
        throw error;
      }),
    );
    return actor;
  });
}
