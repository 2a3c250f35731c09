/**
 * The sweeper as a model-check actor (issue 19): `runSweep`, the real core of the scheduled
 * sweeper (orphan bodies, unlisted version rows, stray tag rows, resolving work, pending CDN
 * purges), on the run's gated clients; and a fake CloudFront that accepts, throttles or refuses
 * each purge as the plan says and records what it got. Its invariants: the sweeper never
 * removes a body a META, a version row or a live lease names, and no purge a 202 announced is
 * lost (it was accepted, is pending, or was set aside as refused with a reason).
 */
import { CloudFrontClient, type CreateInvalidationCommandInput } from '@aws-sdk/client-cloudfront';
import { BatchWriteItemCommand, QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { CloudFrontInvalidator } from '../../lambda/adapters/cdn-invalidator/cloudfront.js';
import { DynamoBodyReferences } from '../../lambda/adapters/body-references/dynamodb.js';
import { DynamoFanOutProgressRows } from '../../lambda/adapters/fan-out-progress-rows/dynamodb.js';
import { FAN_OUT_PK } from '../../lambda/adapters/fan-out-progress-rows/keys.js';
import { inProgressPartition } from '../../lambda/adapters/revalidations-in-progress/keys.js';
import { S3BodyListing } from '../../lambda/adapters/body-listing/s3.js';
import { S3BodyStore } from '../../lambda/adapters/body-store/s3.js';
import {
  DynamoPendingPurges,
  PENDING_PURGES_PK,
} from '../../lambda/adapters/pending-purges/dynamodb.js';
import { DynamoStatusIndexReader } from '../../lambda/adapters/status-index-reader/dynamodb.js';
import { tagRowRemoval } from '../../lambda/adapters/shared/dynamodb/tag-rows.js';
import { DynamoWorkResolution } from '../../lambda/adapters/work-resolution/dynamodb.js';
import type { CacheKey } from '../../lambda/core/page/model.js';
import type { Clock } from '../../lambda/core/clock.js';
import { retryPendingPurges } from '../../lambda/core/operate/pending-purges.js';
import { runSweep, type SweepDeps } from '../../lambda/core/operate/sweep.js';
import {
  resumeStalledFanOuts,
  type FanOutSweepDeps,
} from '../../lambda/core/revalidate/fan-out.js';
import type {
  BodyListing,
  BodyReferences,
  PendingPurges,
} from '../../lambda/core/operate/ports.js';
import { BODY_KEY_PREFIX } from '../../lambda/core/page/rows.js';
import type { AwsClients } from '../../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import type { Interleaver } from './interleaver.js';
import type { FakeSqs } from './queue.js';
import type { TenantWatch } from './tenants.js';
import { LEASE_SECONDS, type ModelEvent } from './world.js';

export interface SweepPlan {
  readonly skew: number;
  /** Sweeps in a row. */
  readonly laps: number;
}
/** What the fake CloudFront does with the next CreateInvalidation (accept once they run out). */
export type CdnOutcome = 'accept' | 'throttle' | 'refuse';

export const sweeperArbitraries = (skew: fc.Arbitrary<number>) => ({
  sweeps: fc.array(fc.record({ skew, laps: fc.integer({ min: 1, max: 2 }) }), { maxLength: 1 }),
  cdn: fc.array(fc.constantFrom<CdnOutcome>('accept', 'throttle', 'refuse'), { maxLength: 3 }),
});

/**
 * Bodies older than this are the sweeper's to look at. The model has no function timeout and
 * its renders never refresh a lease, so the lease alone bounds when a body can still be
 * published: a lease plus the largest skew between two clocks (settings require + 900 s).
 */
export const ORPHAN_AGE_SECONDS = LEASE_SECONDS + LEASE_SECONDS / 2 + 1;

/**
 * A fan-out not advanced for this long is resent (`ISR_FAN_OUT_STALLED_SECONDS` at its floor): a
 * few jumps of the schedule's time pass it.
 */
export const FAN_OUT_STALLED_SECONDS = 60;

/** A guard of the sweeper or of the purge path removed, for a negative control. */
export type SweeperMutation =
  | 'sweep-ignores-references'
  | 'sweep-ignores-age-and-leases'
  | 'pending-purge-dropped'
  | 'no-pending-record'
  | 'no-stall-resend';

/** CloudFront as the model's CDN: gated, scripted, remembering every invalidation it accepted. */
export class FakeCdn {
  /** CallerReference -> invalidation id: a repeated reference returns the same one. */
  readonly accepted = new Map<string, string>();
  readonly #outcomes: CdnOutcome[];

  constructor(
    outcomes: readonly CdnOutcome[],
    readonly log: ModelEvent[],
    readonly interleaver: Interleaver,
    /** Multi-tenant runs: every actor's invalidations are checked for other tenants' tags. */
    readonly tenantWatch?: TenantWatch,
  ) {
    this.#outcomes = [...outcomes];
  }

  /** A CloudFront client for `actor` whose CreateInvalidation never leaves the process. */
  clientFor(actor: string): CloudFrontClient {
    const client = new CloudFrontClient({
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      maxAttempts: 1,
    });
    client.middlewareStack.add(
      () => async (args) => {
        await this.interleaver.gate(actor, 'cloudfront:CreateInvalidationCommand');
        const batch = (args.input as CreateInvalidationCommandInput).InvalidationBatch;
        const purgeId = batch?.CallerReference ?? '';
        const outcome = this.#outcomes.shift() ?? 'accept';
        this.log.push({ kind: 'cdn', actor, purgeId, items: batch?.Paths?.Items ?? [], outcome });
        if (outcome !== 'accept') throw cdnError(outcome);
        const id = this.accepted.get(purgeId) ?? `I${this.accepted.size + 1}`;
        this.accepted.set(purgeId, id);
        return { output: { Invalidation: { Id: id }, $metadata: {} }, response: {} } as never;
      },
      { step: 'initialize', name: 'model-cdn' },
    );
    this.tenantWatch?.watch(actor, { cloudfront: client });
    return client;
  }
}

const cdnError = (outcome: 'throttle' | 'refuse') =>
  outcome === 'throttle'
    ? Object.assign(new Error('Rate exceeded (model)'), {
        name: 'TooManyInvalidationsInProgress',
        $fault: 'client',
      })
    : Object.assign(new Error('refused (model)'), { name: 'InvalidArgument', $fault: 'client' });

/**
 * The production purger over the fake CloudFront: it gives up at the first throttle (model time
 * stands still while it sleeps) and records the purge as pending in the table.
 */
export function purgerFor(
  cdn: FakeCdn,
  actor: string,
  dynamodb: DynamoDBClient,
  tableName: string,
  clock: Clock,
  mutation: string,
): CloudFrontInvalidator {
  return new CloudFrontInvalidator({
    client: cdn.clientFor(actor),
    distributionId: 'EMODEL',
    pending: pendingStore(dynamodb, tableName, mutation),
    clock,
    logger: { info: () => undefined, warn: () => undefined },
    backoff: { baseDelayMs: 1, maxDelayMs: 1, budgetMs: 0 },
    coalesceWindowMs: 0,
    random: () => 0,
  });
}

/** The pending purges' table rows, or a mutated store that loses some. */
function pendingStore(client: DynamoDBClient, tableName: string, mutation: string): PendingPurges {
  const store = new DynamoPendingPurges({ client, tableName });
  if (mutation === 'no-pending-record')
    return Object.assign(store, { add: () => Promise.resolve() });
  if (mutation === 'pending-purge-dropped') {
    // A naive flush: a purge throttled again is taken as done.
    return Object.assign(store, { recordAttempt: (purge: never) => store.remove(purge) });
  }
  return store;
}

export interface SweeperContext {
  readonly log: ModelEvent[];
  readonly interleaver: Interleaver;
  readonly keys: readonly CacheKey[];
  readonly tableName: string;
  readonly bucket: string;
  readonly cdn: FakeCdn;
  readonly clientsOf: (actor: string, faults: { skew: number }) => AwsClients;
  readonly clockFor: (skew: number) => Clock;
  /** Where a resent fan-out step goes. */
  readonly sqs: FakeSqs;
  readonly mutation: string;
}

/** Starts the plan's sweepers; @returns their actor names */
export function startSweepers(ctx: SweeperContext, sweeps: readonly SweepPlan[]): string[] {
  return sweeps.map((plan, index) => {
    const actor = `s${index}`;
    const deps = sweepDeps(ctx, actor, plan.skew);
    void ctx.interleaver.start(actor, async () => {
      for (let lap = 0; lap < plan.laps; lap++) {
        const report = await runSweep(deps);
        const failed = report.errors[0];
        if (failed !== undefined) throw failed.error;
      }
    });
    return actor;
  });
}

/** `createSweeperDeps`' wiring, scoped to this run's pages (runs share one table and bucket). */
function sweepDeps(ctx: SweeperContext, actor: string, skew: number): SweepDeps {
  const clients = ctx.clientsOf(actor, { skew });
  const table = { client: clients.dynamodb, tableName: ctx.tableName };
  const clock = ctx.clockFor(skew);
  const pks = new Set(ctx.keys.map((key) => key.pk));
  const reader = new DynamoStatusIndexReader(table);
  const purger = purgerFor(ctx.cdn, actor, clients.dynamodb, ctx.tableName, clock, ctx.mutation);
  const ignoresAge = ctx.mutation === 'sweep-ignores-age-and-leases';
  const fanOuts = fanOutSweepDeps(ctx, actor, clients, clock);
  return {
    tasks: {
      index: {
        readShard: async (shard, limit) => {
          const page = await reader.readShard(shard, limit);
          return { ...page, rows: page.rows.filter((row) => pks.has(row.pk)) };
        },
      },
      clock,
      pageLimit: 1_000,
      resolution: new DynamoWorkResolution(table),
    },
    orphans: {
      listing: runListing(ctx, clients),
      references: references(new DynamoBodyReferences(table), ctx.mutation),
      bodies: new S3BodyStore({ client: clients.s3, bucket: ctx.bucket }),
      cursor: { load: () => Promise.resolve(undefined), save: () => Promise.resolve() },
      tagRows: tagRowRemoval(table),
      clock,
      bodyKeyPrefix: BODY_KEY_PREFIX,
      orphanAgeSeconds: ignoresAge ? -Infinity : ORPHAN_AGE_SECONDS,
      listLimit: 1_000,
    },
    resumeFanOuts: () => resumeStalledFanOuts(fanOuts, fanOuts),
    flushPendingPurges: async () =>
      (
        await retryPendingPurges({
          pending: pendingStore(clients.dynamodb, ctx.tableName, ctx.mutation),
          cdn: purger,
          clock,
        })
      ).submitted.length,
  };
}

/**
 * The sweeper's fan-out part as `createSweeperDeps` wires it, over the run's clients and the
 * model's queue (the run's table holds only this run's progress rows: `clearRunRows`). The
 * `no-stall-resend` control finds nothing stalled.
 */
export function fanOutSweepDeps(
  ctx: Pick<SweeperContext, 'tableName' | 'sqs' | 'mutation'>,
  actor: string,
  clients: AwsClients,
  clock: Clock,
): FanOutSweepDeps {
  const progress = new DynamoFanOutProgressRows({
    client: clients.dynamodb,
    tableName: ctx.tableName,
  });
  return {
    progress:
      ctx.mutation === 'no-stall-resend'
        ? Object.assign(progress, { stalled: () => Promise.resolve([]) })
        : progress,
    fanOutQueue: ctx.sqs.queueFor(actor),
    clock,
    stalledAfterMs: FAN_OUT_STALLED_SECONDS * 1000,
    limit: 1_000,
  };
}

/**
 * The run's bodies, each written when the log says (model time: S3's LastModified is the wall
 * clock's, which the model's time does not follow).
 */
function runListing(ctx: SweeperContext, clients: AwsClients): BodyListing {
  return {
    list: async () => {
      const bodies = [];
      for (const key of ctx.keys) {
        // `bodyKeyOf`: `pages/<tenant or _>/<hash>/` (a tenant's bodies are under its name).
        const prefix = `${BODY_KEY_PREFIX}${key.tenant ?? '_'}/${key.hash}/`;
        const listing = new S3BodyListing({ client: clients.s3, bucket: ctx.bucket, prefix });
        const page = await listing.list({ cursor: undefined, limit: 1_000 });
        bodies.push(...page.bodies.map((body) => ({ ...body, writtenAt: writtenAt(ctx, body) })));
      }
      return { bodies, next: undefined };
    },
  };
}

function writtenAt(ctx: SweeperContext, body: { s3Key: string; writtenAt: number }): number {
  const written = ctx.log.findLast((event) => event.kind === 'body' && event.s3Key === body.s3Key);
  return written?.kind === 'body' ? written.at : body.writtenAt;
}

/**
 * The real references, or mutated: none (every old body looks like an orphan), or no lease
 * (with no age either, a body in the middle of its render looks like one).
 */
function references(real: BodyReferences, mutation: string): BodyReferences {
  const ignoresReferences = mutation === 'sweep-ignores-references';
  if (!ignoresReferences && mutation !== 'sweep-ignores-age-and-leases') return real;
  return {
    of: async (pk) => {
      const refs = await real.of(pk);
      return ignoresReferences
        ? { ...refs, s3Keys: new Set<string>() }
        : { ...refs, lease: undefined };
    },
    forgetUnlisted: (pk, sks) => real.forgetUnlisted(pk, sks),
  };
}

/**
 * Forgets the rows of earlier runs that a sweeper or an origin reads whole (pending purges,
 * fan-out progress, in-progress entries): runs share one table, each sees only its own.
 */
export async function clearRunRows(
  client: DynamoDBClient,
  tableName: string,
  shards: number,
  tenants: readonly (string | undefined)[] = [undefined],
) {
  const partitions = [
    PENDING_PURGES_PK,
    FAN_OUT_PK,
    ...tenants.flatMap((tenant) =>
      Array.from({ length: shards }, (_, shard) => inProgressPartition(tenant, shard)),
    ),
  ];
  for (const pk of partitions) {
    const { Items } = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: pk } },
        ConsistentRead: true,
      }),
    );
    for (let i = 0; i < (Items ?? []).length; i += 25) {
      const chunk = (Items ?? []).slice(i, i + 25);
      await client.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [tableName]: chunk.map((item) => ({
              DeleteRequest: { Key: { pk: item.pk, sk: item.sk } },
            })),
          },
        }),
      );
    }
  }
}

/** A body the sweeper deleted: was it still named by META, a version row, or a live lease? */
export async function checkRetired(
  client: DynamoDBClient,
  tableName: string,
  log: readonly ModelEvent[],
  event: Extract<ModelEvent, { kind: 'retire' }>,
): Promise<string | undefined> {
  const { Items } = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: event.pk } },
      ConsistentRead: true,
    }),
  );
  for (const item of Items ?? []) {
    if (item.s3_key?.S === event.s3Key)
      return `${event.actor} deleted ${event.s3Key}, which ${item.sk?.S} of ${event.pk} names`;
  }
  const token = event.s3Key.split('/').pop() ?? '';
  const lease = log.findLast((one) => one.kind === 'acquire' && one.token === token);
  const ended = log.some(
    (one) => (one.kind === 'release' || one.kind === 'publish') && one.token === token,
  );
  if (lease?.kind === 'acquire' && !ended && lease.expiresAt - lease.skew > event.at) {
    return `${event.actor} deleted ${event.s3Key} at ${event.at}, while its render's lease was live until ${lease.expiresAt - lease.skew}`;
  }
  return undefined;
}

/**
 * No purge a 202 announced is lost: the fake CDN accepted it, or it waits as pending, or it was
 * set aside as refused with a reason.
 */
export async function checkPurges(
  client: DynamoDBClient,
  tableName: string,
  log: readonly ModelEvent[],
  cdn: FakeCdn,
): Promise<string | undefined> {
  for (const event of log) {
    if (event.kind !== 'revalidated' || event.purgeId === undefined) continue;
    if (cdn.accepted.has(event.purgeId)) continue;
    const rows = await purgeRows(client, tableName, event.purgeId);
    if (rows.some((row) => !row.refused || row.reason !== '')) continue;
    return `${event.actor}'s purge ${event.purgeId} answered 202, but it is neither accepted, pending nor refused with a reason`;
  }
  return undefined;
}

async function purgeRows(client: DynamoDBClient, tableName: string, purgeId: string) {
  const { Items } = await client.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'purge_id = :id',
      ExpressionAttributeValues: { ':pk': { S: PENDING_PURGES_PK }, ':id': { S: purgeId } },
      ConsistentRead: true,
    }),
  );
  return (Items ?? []).map((item) => ({
    refused: item.sk?.S?.startsWith('REFUSED#') === true,
    reason: item.reason?.S ?? '',
  }));
}
