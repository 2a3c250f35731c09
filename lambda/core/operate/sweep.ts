/**
 * The sweeper's look at work that needs an operator (seed 004), read from the sparse status
 * index shard by shard with bounded Queries (never a Scan), plus the orphan-body sweep
 * (`orphan-bodies.ts`). Pure use case: ports in, a report out; the handler turns the report
 * into metrics and one log line.
 *
 * Cost of the status part of a run: `5 statuses × STATUS_SHARDS (4) = 20` Queries on the GSI
 * (eventually consistent: 0.5 read unit per 4 KB read, 0.5 at least even when empty). Idle, 10
 * read units; at most `20 × ceil(pageLimit × row size / 4 KB) × 0.5`, i.e. with the default
 * 100 rows of ≤ 1 KB, 20 × 13 × 0.5 = 130 read units, however many pages fail.
 */
import { epochSeconds, type Clock } from '../clock.js';
import { sweepOrphanBodies, type OrphanReport, type OrphanSweepDeps } from './orphan-bodies.js';
import type { StatusIndexReader, StatusRow, WorkResolution } from './ports.js';
import { IndexedStatus, RequestStatus, statusShards } from '../page/rows.js';
import { resolveSuperseded } from './resolve-work.js';
import type { ResumeReport } from './resume-deferred.js';

/** Metric names the alarms and the dashboard key on (lib/isr-sweeper.ts and the dashboard import them). */
export const SweeperMetric = {
  MissingTasks: 'MissingTasks',
  FailedTasks: 'FailedTasks',
  AbandonedLeases: 'AbandonedLeases',
  FailingPages: 'FailingPages',
  BrokenPages: 'BrokenPages',
  StartedNotCompleted: 'StartedNotCompleted',
  BodiesListed: 'BodiesListed',
  OrphanBodiesRetired: 'OrphanBodiesRetired',
  UnlistedVersionsDeleted: 'UnlistedVersionsDeleted',
  PendingPurgesFlushed: 'PendingPurgesFlushed',
  FanOutsResumed: 'FanOutsResumed',
  /** Intents deferred by the regeneration budget, re-queued this run (`resume-deferred.ts`). */
  DeferredIntentsResumed: 'DeferredIntentsResumed',
  /** Deferred intents still waiting after this run (of the rows one run reads). */
  DeferredIntentsWaiting: 'DeferredIntentsWaiting',
} as const;

export interface TaskReport {
  /** REQ# rows still STARTED after their `expected_completion` (a crashed or lost delivery). */
  readonly missing: readonly StatusRow[];
  /** REQ# rows FAILED for good, with their reason, waiting for a person. */
  readonly failed: readonly StatusRow[];
  /** LOCK rows whose lease ran out with neither a publish nor a release (both delete LOCK). */
  readonly abandoned: readonly StatusRow[];
  /** META rows of pages whose last render failed and that are still retried (core/backoff.ts). */
  readonly failing: readonly StatusRow[];
  /** META rows of pages whose regenerations keep failing: no longer retried on their own. */
  readonly broken: readonly StatusRow[];
  /**
   * The started − completed gap: REQ# rows STARTED at this run, i.e. intents claimed whose call
   * has neither completed nor failed (in flight, or missing). A completion or a failure takes a
   * row out of the index, so this is `started − completed − failed` over the rows' lifetime.
   */
  readonly startedOpen: number;
  /** Shards holding more rows than a run reads: every count above is then a lower bound. */
  readonly truncated: readonly string[];
  /** FAILED and missing rows of pages published since, resolved this run (`resolve-work.ts`). */
  readonly resolved: number;
}

export interface TaskSweepDeps {
  readonly index: StatusIndexReader;
  readonly clock: Clock;
  /** Rows read per shard per run. */
  readonly pageLimit: number;
  /** Resolves work a later publish made moot; without it, every row is reported. */
  readonly resolution?: WorkResolution | undefined;
}

/** Reads every shard of every indexed status once (oldest first, so overdue rows come first). */
export async function sweepTasks(deps: TaskSweepDeps): Promise<TaskReport> {
  const now = epochSeconds(deps.clock);
  const truncated: string[] = [];
  const read = async (status: IndexedStatus): Promise<StatusRow[]> => {
    const pages = await Promise.all(
      statusShards(status).map(async (shard) => {
        const page = await deps.index.readShard(shard, deps.pageLimit);
        if (page.truncated) truncated.push(shard);
        return page.rows;
      }),
    );
    return pages.flat();
  };
  const [started, failed, leases, failing, broken] = await Promise.all([
    read(IndexedStatus.Started),
    read(IndexedStatus.Failed),
    read(IndexedStatus.Lease),
    read(IndexedStatus.Failing),
    read(IndexedStatus.Broken),
  ]);
  // "Past" on the caller's clock: a row due this very second is not missing yet.
  const overdue = started.filter((row) => row.at < now);
  const missing = await resolveSuperseded(deps.resolution, overdue, RequestStatus.Started, now);
  const open = await resolveSuperseded(deps.resolution, failed, RequestStatus.Failed, now);
  return {
    missing: missing.open,
    failed: open.open,
    abandoned: leases.filter((row) => row.at < now),
    failing,
    broken,
    startedOpen: started.length - missing.resolved,
    truncated: truncated.sort(),
    resolved: missing.resolved + open.resolved,
  };
}

/** The keys a log line lists per kind: enough to start from, bounded so the line stays small. */
export const MAX_LOGGED_KEYS = 20;

/** The report as the one log line's fields: counts, and a bounded list of keys per kind. */
export function taskLogFields(report: TaskReport, maxKeys = MAX_LOGGED_KEYS) {
  const keys = (rows: readonly StatusRow[], withError = false) =>
    rows.slice(0, maxKeys).map((row) => ({
      pk: row.pk,
      sk: row.sk,
      at: row.at,
      ...(row.owner === undefined ? {} : { owner: row.owner }),
      ...(withError && row.errorCode !== undefined ? { errorCode: row.errorCode } : {}),
      ...(withError && row.error !== undefined ? { error: row.error.slice(0, 200) } : {}),
    }));
  return {
    missingTasks: report.missing.length,
    failedTasks: report.failed.length,
    abandonedLeases: report.abandoned.length,
    failingPages: report.failing.length,
    brokenPages: report.broken.length,
    startedOpen: report.startedOpen,
    resolvedTasks: report.resolved,
    truncatedShards: report.truncated,
    missing: keys(report.missing),
    failed: keys(report.failed, true),
    abandoned: keys(report.abandoned),
    failing: keys(report.failing, true),
    broken: keys(report.broken, true),
  };
}

export interface SweepDeps {
  readonly tasks: TaskSweepDeps;
  readonly orphans: OrphanSweepDeps;
  /**
   * Submits the CDN purges that were throttled earlier (`CdnPurge` 'pending'), once per run, when
   * the service has them. @returns how many were submitted
   */
  readonly flushPendingPurges?: (() => Promise<number>) | undefined;
  /**
   * Resends the revalidation fan-outs that stopped, from their stored cursor (revalidate's
   * `resumeStalledFanOuts`, which the sweeper's wiring passes in). @returns the ones resent
   */
  readonly resumeFanOuts?: (() => Promise<readonly ResumedFanOut[]>) | undefined;
  /** Re-queues intents the regeneration budget deferred (`resume-deferred.ts`), when one is set. */
  readonly resumeDeferred?: (() => Promise<ResumeReport>) | undefined;
}

/** A fan-out resent, as the report names it. */
export interface ResumedFanOut {
  readonly effectId: string;
  readonly mode: string;
  readonly tag: string;
}

/** One run's findings; a part that failed is undefined and its error is in `errors`. */
export interface SweepReport {
  readonly tasks: TaskReport | undefined;
  readonly orphans: OrphanReport | undefined;
  readonly purgesFlushed: number | undefined;
  /** Fan-outs resent (effect, mode and tag of each). */
  readonly fanOutsResumed?: readonly string[] | undefined;
  /** Deferred intents re-queued and still waiting. */
  readonly deferred?: ResumeReport | undefined;
  readonly errors: readonly { readonly part: string; readonly error: unknown }[];
}

/** The parts are independent: one failing does not keep the others from reporting. */
export async function runSweep(deps: SweepDeps): Promise<SweepReport> {
  const [tasks, orphans, purges, fanOuts, deferred] = await Promise.allSettled([
    sweepTasks(deps.tasks),
    sweepOrphanBodies(deps.orphans),
    deps.flushPendingPurges === undefined ? Promise.resolve(undefined) : deps.flushPendingPurges(),
    deps.resumeFanOuts === undefined
      ? Promise.resolve(undefined)
      : resumeFanOuts(deps.resumeFanOuts),
    deps.resumeDeferred === undefined ? Promise.resolve(undefined) : deps.resumeDeferred(),
  ]);
  const errors: { part: string; error: unknown }[] = [];
  const valueOf = <T>(part: string, result: PromiseSettledResult<T>): T | undefined => {
    if (result.status === 'fulfilled') return result.value;
    errors.push({ part, error: result.reason });
    return undefined;
  };
  return {
    tasks: valueOf('tasks', tasks),
    orphans: valueOf('orphans', orphans),
    purgesFlushed: valueOf('purges', purges),
    fanOutsResumed: valueOf('fan-outs', fanOuts),
    deferred: valueOf('deferred', deferred),
    errors,
  };
}

/**
 * The input of the schedule that only catches up on deferred intents (every minute, when a
 * regeneration budget is set: lib/isr-budget.ts), beside the 5-minute sweep.
 */
export const DEFERRED_ONLY_INPUT = { part: 'deferred' } as const;

/** The minute's run between sweeps: deferred intents only (nothing when no budget is set). */
export async function resumeDeferredOnly(deps: SweepDeps): Promise<SweepReport> {
  const none = { tasks: undefined, orphans: undefined, purgesFlushed: undefined };
  if (deps.resumeDeferred === undefined) return { ...none, errors: [] };
  try {
    return { ...none, deferred: await deps.resumeDeferred(), errors: [] };
  } catch (error) {
    return { ...none, errors: [{ part: 'deferred', error }] };
  }
}

/** Resends each stopped fan-out's step; named by effect, mode and tag for the log line. */
async function resumeFanOuts(resume: () => Promise<readonly ResumedFanOut[]>): Promise<string[]> {
  const resumed = await resume();
  return resumed.map((progress) => `${progress.effectId} ${progress.mode}#${progress.tag}`);
}
