/**
 * The regeneration budget (issue 36): at most `perMinute` regenerations a minute per site, or per
 * tenant in multi-tenant mode. Every worker container counts in the cache table, so the cap holds
 * across them. Past the cap an intent is deferred, not dropped: one row per page keeps it until
 * a later window has room (`core/operate/resume-deferred.ts`).
 *
 * Both rows live under `ISR#` partitions. FaceTheory readers only read the partitions of a cache
 * key (`CACHE#<hash>`, `TENANT#<tenant>#CACHE#<hash>`), so they never see these rows.
 */
import { parseIntent, type RegenerationIntent } from './intent.js';

/** One budget window: a minute. */
export const BUDGET_WINDOW_SECONDS = 60;

/** The window `nowSeconds` falls in (minutes since the epoch). */
export const budgetWindowOf = (nowSeconds: number): number =>
  Math.floor(nowSeconds / BUDGET_WINDOW_SECONDS);

/** When `window` ends and the next one's budget opens, in epoch seconds. */
export const windowEndOf = (window: number): number => (window + 1) * BUDGET_WINDOW_SECONDS;

/** The scope a page's regenerations count in: its tenant, or `''` for a single site. */
export const budgetScopeOf = (tenant: string | undefined): string => tenant ?? '';

/** The partition of a scope's per-minute counter rows (one row a minute, `sk = MINUTE#<n>`). */
export const budgetPk = (scope: string): string =>
  scope === '' ? 'ISR#BUDGET' : `ISR#BUDGET#TENANT#${scope}`;

export const budgetSk = (window: number): string => `MINUTE#${window}`;

/** A counter row is garbage after its minute; TTL deletes it an hour on (never correctness). */
export const BUDGET_ROW_TTL_SECONDS = 3_600;

/** The partition of deferred intents: one row per page (`sk` = the page's cache pk). */
export const DEFERRED_PK = 'ISR#DEFERRED';

/**
 * A deferred row lives as long as the regeneration queue keeps a message (4 days): a page
 * still stale after that is queued again by its next stale hit.
 */
export const DEFERRED_TTL_SECONDS = 4 * 24 * 3_600;

/** The `sk` prefix of a scope's deferred rows: its pages' cache pks. */
export const deferredPrefixOf = (scope: string): string =>
  scope === '' ? 'CACHE#' : `TENANT#${scope}#CACHE#`;

/** An intent waiting for a window with room. */
export interface DeferredIntent {
  /** The page's cache pk: one row per page, so deferred intents of a page coalesce. */
  readonly pk: string;
  readonly scope: string;
  /** The intent as it was queued (JSON). */
  readonly body: string;
  /** A revalidation's (no observed generation): a stale hit's never replaces it. */
  readonly explicit: boolean;
  /** Epoch seconds; a release only deletes the row it read (a newer deferral stays). */
  readonly deferredAt: number;
}

/**
 * The budget's shared state, in the cache table. One small write counts a regeneration: an
 * UpdateItem `ADD` conditioned on the count being below the cap (1 WCU, refused or not).
 */
export interface RegenerationBudget {
  /** Counts one regeneration in `scope`'s `window` unless it holds `cap` already. */
  take(scope: string, window: number, cap: number): Promise<boolean>;
  /** Regenerations counted in `scope`'s `window` (0 when none). */
  count(scope: string, window: number): Promise<number>;
  /**
   * Keeps an intent until a window has room: one row per page, the latest intent wins, except
   * that a stale hit's never replaces a revalidation's (it may carry a soft purge).
   */
  defer(entry: DeferredIntent): Promise<void>;
  /** Deferred intents, in `sk` order, at most `limit`; of one scope when it is given. */
  deferred(limit: number, scope?: string): Promise<readonly DeferredIntent[]>;
  /** Forgets a deferred intent once re-queued, if it was not deferred again since it was read. */
  release(entry: DeferredIntent): Promise<void>;
}

/** The deferred row of an intent, as `defer` keeps it. */
export const deferredOf = (
  pk: string,
  intent: RegenerationIntent,
  body: string,
  nowSeconds: number,
): DeferredIntent => ({
  pk,
  scope: budgetScopeOf(intent.tenant),
  body,
  explicit: intent.observedGeneratedAt === undefined,
  deferredAt: nowSeconds,
});

/** The intent a deferred row keeps. @throws InvalidMessageError (a row not written by `defer`) */
export const intentOfDeferred = (entry: DeferredIntent): RegenerationIntent =>
  parseIntent(entry.body);

/** The budget as the worker, the origin and the sweeper are given it: the port and the cap. */
export interface BudgetDeps {
  readonly budget: RegenerationBudget;
  /** Regenerations a minute per site (per tenant); at least 1. */
  readonly perMinute: number;
}
