/**
 * How long a page's rows are kept once its generation is stale and nobody asks for it. A page
 * that is requested gets regenerated, which moves its TTL forward; one nobody asks for again (a
 * crawler's random path, a removed page) is collected by DynamoDB TTL, its body by the sweeper.
 * Gone pages (404/410) are kept only briefly. TTL is garbage collection, never freshness.
 */
import { SETTING_DEFAULTS } from './settings/index.js';

export interface Retention {
  /** After a stale page was last regenerated. */
  readonly idleSeconds: number;
  /** The same for a 404 or 410 page. */
  readonly goneSeconds: number;
}

export const DEFAULT_RETENTION: Retention = {
  idleSeconds: SETTING_DEFAULTS.metaTtlSeconds,
  goneSeconds: SETTING_DEFAULTS.goneTtlSeconds,
};

/** When DynamoDB TTL may collect a META row (see `Retention`). */
export const metaTtl = (
  generatedAt: number,
  revalidateSeconds: number,
  status: number | undefined,
  retention: Retention,
): number =>
  generatedAt +
  revalidateSeconds +
  (status === 404 || status === 410 ? retention.goneSeconds : retention.idleSeconds);

/**
 * META's TTL after a regeneration attempt that published nothing (a failure record): a page
 * still requested keeps its rows and history; never earlier than it was.
 */
export const attemptTtl = (
  current: number | undefined,
  nowSeconds: number,
  status: number | undefined,
  retention: Retention,
): number => Math.max(current ?? 0, metaTtl(nowSeconds, 0, status, retention));
