/**
 * What the template asks of the account's Lambda concurrency, said at synth: the reservations
 * (all opt-in) and the limit they need. An account may reserve only while "at least 100
 * simultaneous executions" stay unreserved
 * (https://docs.aws.amazon.com/lambda/latest/api/API_PutFunctionConcurrency.html,
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html), so a template
 * reserving N needs a limit of N + 100. The default limit is 1,000 per Region
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html, formerly
 * concurrent-executions.html), but "new AWS accounts have reduced concurrency and memory
 * quotas" (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
 */
import type { FunctionKind } from '../lambda/core/settings/index.js';

/** The prop reserving each function's concurrency; the purger reserves nothing (its event source bounds it). */
export const RESERVATIONS = {
  origin: 'originReservedConcurrency',
  worker: 'workerReservedConcurrency',
  revalidate: 'revalidateReservedConcurrency',
  sweeper: 'sweeperReservedConcurrency',
} as const satisfies Partial<Record<FunctionKind, string>>;

export type ReservationKey = (typeof RESERVATIONS)[keyof typeof RESERVATIONS];

/** Unreserved executions Lambda keeps for functions without a reservation (configuration-concurrency.html). */
export const UNRESERVED_MINIMUM = 100;
/** Lambda's documented default concurrency quota per Region (gettingstarted-limits.html). */
export const DOCUMENTED_ACCOUNT_LIMIT = 1_000;

/** The settings the quota reads: each reservation (undefined: none) and the account's limit. */
export type QuotaValues = { readonly [K in ReservationKey]: number | undefined } & {
  readonly accountConcurrencyLimit: number;
};

export interface QuotaReport {
  /** Each reservation set, as `prop=value`. */
  readonly reservations: readonly string[];
  /** Their sum. */
  readonly reserved: number;
  /** The account limit the template needs: 0 when nothing is reserved, else reserved + 100. */
  readonly needed: number;
  /** The limit it is checked against (`accountConcurrencyLimit`). */
  readonly limit: number;
}

export function quotaOf(s: QuotaValues): QuotaReport {
  const set = Object.values(RESERVATIONS).flatMap((key) => {
    const value = s[key];
    return value === undefined ? [] : [[key, value] as const];
  });
  const reserved = set.reduce((sum, [, value]) => sum + value, 0);
  return {
    reservations: set.map(([key, value]) => `${key}=${value}`),
    reserved,
    needed: reserved === 0 ? 0 : reserved + UNRESERVED_MINIMUM,
    limit: s.accountConcurrencyLimit,
  };
}

/** Reservations the account's limit cannot hold: the deploy would fail, so synth does. */
export function quotaProblems(s: QuotaValues): string[] {
  const q = quotaOf(s);
  if (q.needed <= q.limit) return [];
  return [
    `the reservations (${q.reservations.join(', ')}) add up to ${q.reserved}: with the ` +
      `${UNRESERVED_MINIMUM} executions Lambda keeps unreserved the account needs a concurrency ` +
      `limit of ${q.needed}, above accountConcurrencyLimit (${q.limit}). Lower them (0 or unset ` +
      'reserves none), or raise the limit (Service Quotas) and set accountConcurrencyLimit to ' +
      "what `aws lambda get-account-settings` says (docs/DEPLOY.md, 'Before your first deploy')",
  ];
}

/** The one line synth prints about the account's concurrency. */
export function quotaLine(q: QuotaReport): string {
  if (q.reserved === 0) {
    return (
      'Lambda concurrency: the template reserves none (origin, worker, revalidate, sweeper and ' +
      'purger share the unreserved pool), so it fits any account limit, a new account included.'
    );
  }
  const fitsDefault = q.needed <= DOCUMENTED_ACCOUNT_LIMIT ? 'fits' : 'does not fit';
  return (
    `Lambda concurrency: the template reserves ${q.reserved} (${q.reservations.join(', ')}), so ` +
    `the account needs a concurrency limit of at least ${q.needed} (${UNRESERVED_MINIMUM} stay ` +
    `unreserved); accountConcurrencyLimit is ${q.limit}. It ${fitsDefault} Lambda's documented ` +
    `default of ${DOCUMENTED_ACCOUNT_LIMIT}; a new account may start lower: check ` +
    '`aws lambda get-account-settings`.'
  );
}
