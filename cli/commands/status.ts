/**
 * `isr stuck` and `isr failed`: the work that needs an operator's eye, as the sweeper sees it
 * (`core/operate/sweep.ts` over the sparse status index, one Query per shard, never a Scan): STARTED past
 * its expected completion, LOCKs past their expiry (abandoned), FAILED REQ# rows and broken pages.
 */
import { DynamoStatusIndexReader } from '../../lambda/adapters/status-index-reader/dynamodb.js';
import { epochSeconds, type Clock } from '../../lambda/core/clock.js';
import type { StatusRow as IndexedRow } from '../../lambda/core/operate/ports.js';
import { sweepTasks, type TaskReport } from '../../lambda/core/operate/sweep.js';
import type { Target } from '../target.js';

export interface StatusRow {
  readonly kind: 'started' | 'abandoned-lease' | 'failed' | 'broken';
  readonly pk: string;
  readonly sk: string;
  /** The page, when the row names it (META's `cache_key`, a REQ# row's request). */
  readonly cacheKey: string | undefined;
  /** `status_at`: when it should have finished, when the lease ran out, or when it failed. */
  readonly at: number;
  /** Seconds past `at` (stuck rows) or since it failed. */
  readonly ageSeconds: number;
  readonly owner: string | undefined;
  readonly error: string | undefined;
}

export interface StatusDeps {
  readonly target: Pick<Target, 'clients' | 'tableName'>;
  readonly clock: Clock;
  /** Most rows read per status and shard. @default 100 */
  readonly limit?: number | undefined;
}

/** STARTED past its expected completion, and LOCKs past their expiry: work nobody is finishing. */
export async function stuck(deps: StatusDeps): Promise<StatusRow[]> {
  const { report, now } = await sweep(deps);
  return [
    ...report.missing.map((row) => rowOf('started', row, now)),
    ...report.abandoned.map((row) => rowOf('abandoned-lease', row, now)),
  ];
}

/** FAILED REQ# rows (with their error) and pages whose regenerations keep failing. */
export async function failed(deps: StatusDeps): Promise<StatusRow[]> {
  const { report, now } = await sweep(deps);
  return [
    ...report.failed.map((row) => rowOf('failed', row, now)),
    ...report.broken.map((row) => rowOf('broken', row, now)),
  ];
}

async function sweep(deps: StatusDeps): Promise<{ report: TaskReport; now: number }> {
  const index = new DynamoStatusIndexReader({
    client: deps.target.clients.dynamodb,
    tableName: deps.target.tableName,
  });
  const report = await sweepTasks({ index, clock: deps.clock, pageLimit: deps.limit ?? 100 });
  return { report, now: epochSeconds(deps.clock) };
}

function rowOf(kind: StatusRow['kind'], row: IndexedRow, now: number): StatusRow {
  return {
    kind,
    pk: row.pk,
    sk: row.sk,
    cacheKey: row.cacheKey,
    at: row.at,
    ageSeconds: now - row.at,
    owner: row.owner,
    error: row.error,
  };
}
