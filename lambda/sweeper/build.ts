import { DynamoFanOutProgressRows } from '../adapters/fan-out-progress/dynamodb.js';
import { SqsRegenerationQueue } from '../adapters/regeneration-queue/sqs.js';
import { DynamoBodyReferences } from '../adapters/body-references/dynamodb.js';
import { DynamoStatusIndexReader } from '../adapters/status-index-reader/dynamodb.js';
import { DynamoSweepCursor } from '../adapters/sweep-cursor/dynamodb.js';
import { DynamoTagRows } from '../adapters/tag-index/dynamodb.js';
import { DynamoWorkResolution } from '../adapters/work-resolution/dynamodb.js';
import { S3BodyListing } from '../adapters/body-listing/s3.js';
import { S3BodyStore } from '../adapters/body-store/s3.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { SweepDeps } from '../core/operate/sweep.js';
import { resumeStalledFanOuts, type FanOutSweepDeps } from '../core/revalidate/fan-out.js';
import type { AwsClients } from '../shared/aws-clients.js';
import type { SweeperConfig } from '../shared/config.js';
import { createObservability } from '../shared/observability.js';
import { createSweeperHandler } from './handler.js';

export interface SweeperRuntime {
  readonly clients: AwsClients;
  readonly clock?: Clock | undefined;
  readonly observability?: ReturnType<typeof createObservability> | undefined;
  /** The pending CDN purges to submit each run (wired by the service when it has them). */
  readonly flushPendingPurges?: (() => Promise<number>) | undefined;
}

/** The sweeper's use-case dependencies, from validated configuration and injected clients. */
export function createSweeperDeps(config: SweeperConfig, runtime: SweeperRuntime): SweepDeps {
  const { dynamodb, s3 } = runtime.clients;
  const table = { client: dynamodb, tableName: config.tableName };
  const clock = runtime.clock ?? systemClock;
  const fanOuts: FanOutSweepDeps = {
    progress: new DynamoFanOutProgressRows(table),
    fanOutQueue: new SqsRegenerationQueue({
      client: runtime.clients.sqs,
      queueUrl: config.queueUrl,
    }),
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
      tagRows: new DynamoTagRows(table),
      clock,
      bodyKeyPrefix: config.bodyKeyPrefix,
      orphanAgeSeconds: config.orphanAgeSeconds,
      listLimit: config.orphanListLimit,
    },
    flushPendingPurges: runtime.flushPendingPurges,
    resumeFanOuts: () => resumeStalledFanOuts(fanOuts, fanOuts),
  };
}

/** Builds the sweeper handler from validated configuration and injected clients. */
export function buildSweeperHandler(config: SweeperConfig, runtime: SweeperRuntime) {
  const { logger, metrics } = runtime.observability ?? createObservability('sweeper');
  return createSweeperHandler({ deps: createSweeperDeps(config, runtime), logger, metrics });
}
