/**
 * Human-readable output: plain aligned tables and key/value blocks. Commands return data; this
 * file alone decides how a person sees it (`--json` prints the data as is).
 */
import type { CdnPurge } from '../lambda/core/page/ports.js';
import type { HoldResult, ReleaseResult, RollbackResult } from '../lambda/core/operate/rollback.js';
import { versionIdOf } from '../lambda/core/page/rows.js';
import type { DeadLetterView, RedriveResult } from './commands/dlq.js';
import type { Inspection } from './commands/inspect.js';
import type { RevalidateResult } from './commands/revalidate.js';
import type { StatusRow } from './commands/status.js';

type Cell = string | number | boolean | undefined;

/** Columns padded to their widest cell; `-` for a missing value. */
export function table(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  if (rows.length === 0) return '(none)';
  const text = [
    headers,
    ...rows.map((row) => row.map((cell) => (cell === undefined ? '-' : String(cell)))),
  ];
  const widths = headers.map((_, i) => Math.max(...text.map((row) => (row[i] ?? '').length)));
  return text
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '),
    )
    .join('\n');
}

const keyValues = (pairs: readonly [string, Cell][]): string => {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `${`${key}:`.padEnd(width + 2)}${value ?? '-'}`).join('\n');
};

/** A number of seconds as `45s`, `12m` or `3h`. */
export function span(seconds: number): string {
  const abs = Math.abs(seconds);
  return abs < 120
    ? `${abs}s`
    : abs < 7_200
      ? `${Math.round(abs / 60)}m`
      : `${Math.round(abs / 3_600)}h`;
}

/** Epoch seconds as ISO time plus how far from now. */
export function when(at: number | undefined, now: number): string | undefined {
  if (at === undefined) return undefined;
  const delta = at - now;
  const amount = span(delta);
  return `${new Date(at * 1000).toISOString()} (${delta >= 0 ? `in ${amount}` : `${amount} ago`})`;
}

/**
 * Fresh or held: how long it stays so. Stale: since when, or that a revalidation marked it
 * (`revalidate_seconds` 0), never a meaningless "0s left".
 */
function stateOf(i: Inspection): string {
  const { freshness, meta, now } = i;
  if (freshness === undefined || meta === undefined) return 'not published';
  if (freshness.state === 'fresh' || freshness.held) {
    return `${freshness.state}${freshness.held ? ', held' : ''} (${span(freshness.secondsLeft)} left)`;
  }
  if (meta.revalidateSeconds === 0) return 'stale (marked by a revalidation)';
  return `stale for ${span(now - (meta.generatedAt + meta.revalidateSeconds))}`;
}

export function formatInspection(i: Inspection): string {
  const { meta, now } = i;
  const state = stateOf(i);
  const body =
    i.body === undefined
      ? undefined
      : 'missing' in i.body
        ? `${i.body.s3Key} MISSING`
        : `${i.body.s3Key} (${i.body.size ?? '?'} bytes, etag ${i.body.etag ?? '?'})`;
  const sections = [
    keyValues([
      ['cache key', i.cacheKey.key],
      ['tenant', i.cacheKey.tenant],
      ['pk', i.cacheKey.pk],
      ['state', state],
      ['generated', when(meta?.generatedAt, now)],
      ['revalidate', meta === undefined ? undefined : `${meta.revalidateSeconds}s`],
      ['held until', when(meta?.holdUntil, now)],
      ['status', meta?.statusCode],
      ['content type', meta?.contentType],
      ['etag', meta?.etag],
      ['tags', meta?.tags?.join(', ')],
      ['version', meta?.currentSk === undefined ? undefined : versionIdOf(meta.currentSk)],
      [
        'rolled back',
        meta?.rolledBack && `${when(meta.rolledBack.at, now)} by ${meta.rolledBack.by}`,
      ],
      ['failures', meta?.failures && `${meta.failures.count}: ${meta.failures.error}`],
      ['body', body],
      [
        'lock',
        i.lock &&
          `${i.lock.live ? 'held' : 'expired'} by ${i.lock.owner ?? '?'}, until ${when(i.lock.expiresAt, now)}`,
      ],
    ]),
    `\nversions (${i.versions.length})`,
    table(
      ['id', 'generated', 'status', 'etag', 'live', 'kept'],
      i.versions.map((v) => [
        v.id,
        when(v.generatedAt, now),
        v.statusCode,
        v.etag,
        v.live ? 'live' : '',
        v.kept ? 'kept' : '',
      ]),
    ),
    `\nrequests (${i.requests.length})`,
    table(
      ['key', 'status', 'created', 'expected', 'completed', 'by', 'error'],
      i.requests.map((r) => [
        r.key,
        r.status,
        when(r.createdAt, now),
        when(r.expectedCompletion, now),
        when(r.actualCompletion, now),
        r.lockedBy,
        r.error,
      ]),
    ),
  ];
  return sections.join('\n');
}

/** What an empty `stuck` or `failed` says: what was looked for, and where else to look. */
const NONE: Record<'stuck' | 'failed', string> = {
  stuck: 'no stuck work: no regeneration past its expected completion, no abandoned lease',
  failed:
    'no failed work: no regeneration failed for good, no page broken (10 failed renders in a ' +
    'row); a page whose renders fail but are still retried shows them in `isr inspect <url>`',
};

export function formatStatusRows(rows: readonly StatusRow[], what: 'stuck' | 'failed'): string {
  if (rows.length === 0) return NONE[what];
  return table(
    ['kind', 'page', 'row', 'at', 'age', 'owner', 'error'],
    rows.map((r) => [
      r.kind,
      r.cacheKey ?? r.pk,
      r.sk,
      new Date(r.at * 1000).toISOString(),
      `${r.ageSeconds}s`,
      r.owner,
      r.error,
    ]),
  );
}

export function formatDeadLetters(letters: readonly DeadLetterView[]): string {
  if (letters.length === 0) return 'the DLQ is empty';
  return table(
    ['message id', 'group', 'sent', 'receives', 'code', 'reason', 'body'],
    letters.map((l) => [
      l.messageId,
      l.groupId,
      l.sentAt,
      l.receiveCount,
      l.code,
      l.message,
      l.body.slice(0, 80),
    ]),
  );
}

export const formatRedrive = (result: RedriveResult): string =>
  result.redriven.length === 0
    ? 'nothing to redrive'
    : table(
        ['redriven', 'now on the queue as'],
        result.redriven.map((r) => [r.messageId, r.newMessageId]),
      );

const purgeText = (cdn: CdnPurge | undefined): string | undefined =>
  cdn === undefined
    ? undefined
    : cdn.status === 'submitted'
      ? `submitted ${cdn.invalidationIds.join(', ')}`
      : cdn.status === 'pending'
        ? `pending (${cdn.reason})`
        : 'not configured';

export const formatRollback = (r: RollbackResult, now: number): string =>
  keyValues([
    ['rolled back', `${r.from === undefined ? '?' : versionIdOf(r.from)} -> ${versionIdOf(r.to)}`],
    ['etag', r.meta.etag],
    ['held until', when(r.holdUntil, now)],
    ['took over', r.tookOver && `${r.tookOver.owner ?? '?'} (its render cannot publish)`],
    ['cdn purge', purgeText(r.cdn)],
  ]);

export const formatHold = (r: HoldResult, now: number): string =>
  keyValues([
    ['held until', when(r.holdUntil, now)],
    ['took over', r.tookOver && `${r.tookOver.owner ?? '?'} (its render cannot publish)`],
  ]);

export const formatRelease = (r: ReleaseResult): string =>
  keyValues([
    ['release', r.decision],
    ['cdn purge', purgeText(r.cdn)],
  ]);

export const formatRevalidate = (r: RevalidateResult): string =>
  [
    `HTTP ${r.status}${r.replayed ? ' (replayed)' : ''}  idempotency key ${r.idempotencyKey}`,
    typeof r.receipt === 'string' ? r.receipt : JSON.stringify(r.receipt, null, 2),
  ].join('\n');

/** A revalidation's status: a progress line, then the status as the endpoint answered it. */
export function formatRevalidationStatus(r: RevalidateResult): string {
  if (r.status !== 200 || typeof r.receipt !== 'object' || r.receipt === null) {
    return `HTTP ${r.status}\n${typeof r.receipt === 'string' ? r.receipt : JSON.stringify(r.receipt, null, 2)}`;
  }
  const status = r.receipt as {
    state?: string;
    counts?: { pages?: number; marked?: number; expected_pages?: number; expected_exact?: boolean };
  };
  const counts = status.counts ?? {};
  const marked = counts.marked ?? 0;
  // Against what the revalidation will have marked, when its tags were counted at the 202
  // (`+`: a tag had more pages than were counted); else against the pages found so far.
  const total = Math.max(counts.expected_pages ?? counts.pages ?? 0, marked);
  const more = counts.expected_exact === false ? '+' : '';
  return [
    `${status.state ?? '?'}  ${progressBar(marked, total)} ${marked}/${total}${more} pages marked`,
    JSON.stringify(r.receipt, null, 2),
  ].join('\n');
}

/** `[#####-----]`: how far along `done` of `total` is, 20 columns wide. */
export function progressBar(done: number, total: number): string {
  const width = 20;
  const filled = total === 0 ? width : Math.min(width, Math.floor((done / total) * width));
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}
