import { DynamoCacheTable } from '../adapters/cache-table/dynamodb.js';
import { DynamoFanOutProgressRows } from '../adapters/fan-out-progress-rows/dynamodb.js';
import { SqsRegenerationQueue } from '../adapters/regeneration-queue/sqs.js';
import { DynamoBodyReferences } from '../adapters/body-references/dynamodb.js';
import { DynamoStatusIndexReader } from '../adapters/status-index-reader/dynamodb.js';
import { DynamoSweepCursor } from '../adapters/sweep-cursor/dynamodb.js';
import { tagRowRemoval } from '../adapters/shared/dynamodb/tag-rows.js';
import { DynamoWorkResolution } from '../adapters/work-resolution/dynamodb.js';
import { S3BodyListing } from '../adapters/body-listing/s3.js';
import { S3BodyStore } from '../adapters/body-store/s3.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { SweepDeps } from '../core/operate/sweep.js';
import type { SweepLeaseDeps } from '../core/operate/sweep-lease.js';
import { resumeStalledFanOuts, type FanOutSweepDeps } from '../core/revalidate/fan-out.js';
import type { AwsClients } from '../shared/aws-clients.js';
import type { SweeperConfig } from '../shared/config.js';
import { observabilityOf, type Observed } from '../shared/observability.js';
import { createSweeperHandler } from './handler.js';
import { resumeDeferred } from '../core/operate/resume-deferred.js';
import { createBudgetDeps } from '../shared/budget.js';

export interface SweeperRuntime extends Observed {
  readonly clients: AwsClients;
  readonly clock?: Clock | undefined;
  /** The pending CDN purges to submit each run (wired by the service when it has them). */
  readonly flushPendingPurges?: (() => Promise<number>) | undefined;
}

/** The sweeper's use-case dependencies, from validated configuration and injected clients. */
export function createSweeperDeps(config: SweeperConfig, runtime: SweeperRuntime): SweepDeps {
  const { dynamodb, s3 } = runtime.clients;
  const table = { client: dynamodb, tableName: config.tableName };
  const clock = runtime.clock ?? systemClock;
  const queue = new SqsRegenerationQueue({
    client: runtime.clients.sqs,
    queueUrl: config.queueUrl,
  });
  const budget = createBudgetDeps(config, runtime.clients);
  const fanOuts: FanOutSweepDeps = {
    progress: new DynamoFanOutProgressRows(table),
    fanOutQueue: queue,
    clock,
    stalledAfterMs: config.fanOutStalledSeconds * 1000,
    limit: config.sweepPageLimit,
  };
  return {
    tasks: {
      index: new DynamoStatusIndexReader(table),
      clock,
      pageLimit: config.sweepPageLimit,
      resolution: new DynamoWorkResolution(table),
    },
    orphans: {
      listing: new S3BodyListing({
        client: s3,
        bucket: config.bucket,
        prefix: config.bodyKeyPrefix,
      }),
      references: new DynamoBodyReferences(table),
      bodies: new S3BodyStore({ client: s3, bucket: config.bucket }),
      cursor: new DynamoSweepCursor(table),
      tagRows: tagRowRemoval(table),
      clock,
      bodyKeyPrefix: config.bodyKeyPrefix,
      orphanAgeSeconds: config.orphanAgeSeconds,
      listLimit: config.orphanListLimit,
    },
    flushPendingPurges: runtime.flushPendingPurges,
    resumeFanOuts: () => resumeStalledFanOuts(fanOuts, fanOuts),
    resumeDeferred:
      budget === undefined ? undefined : () => resumeDeferred({ ...budget, queue, clock }),
  };
}

/** Without a timeout in its settings (local mode), a run is held for the deployed one's 2 minutes. */
const DEFAULT_SWEEP_MS = 120_000;

/** The sweep lease on the cache table, held for as long as the function may run. */
export function createSweepLease(config: SweeperConfig, runtime: SweeperRuntime): SweepLeaseDeps {
  const runMs = config.functionTimeoutMs ?? DEFAULT_SWEEP_MS;
  return {
    table: new DynamoCacheTable({ client: runtime.clients.dynamodb, tableName: config.tableName }),
    clock: runtime.clock ?? systemClock,
    holdSeconds: Math.ceil(runMs / 1000) + config.clockSkewMarginSeconds,
    owner: config.functionName,
  };
}

/** Builds the sweeper handler from validated configuration and injected clients. */
export function buildSweeperHandler(config: SweeperConfig, runtime: SweeperRuntime) {
  const { logger, metrics } = observabilityOf(runtime, 'sweeper');
  return createSweeperHandler({
    deps: createSweeperDeps(config, runtime),
    lease: createSweepLease(config, runtime),
    logger,
    metrics,
  });
}
