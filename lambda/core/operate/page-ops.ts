/**
 * What an operator's hand on a page shares (`rollback.ts`, `hold.ts`): its ports, the live META
 * it acts on, the lease it seizes, META's TTL under a hold, and the CDN purge that follows the
 * write, so viewers get at once what the operator set.
 */
import type { AcquiredLease, CacheKey, CacheMeta } from '../page/model.js';
import { cdnKeyTagOf } from '../page/cache-tags.js';
import { epochSeconds, type Clock } from '../clock.js';
import { VersionRequestError } from '../errors.js';
import { seizeLease } from '../page/lease.js';
import type { BodyStore, CacheTable, CdnInvalidator, CdnPurge, TagIndex } from '../page/ports.js';
import type { PageHistory } from './ports.js';
import { DEFAULT_RETENTION, metaTtl, type Retention } from '../retention.js';

export interface PageOpsDeps {
  readonly cacheTable: Pick<CacheTable, 'getMeta' | 'acquireLease' | 'releaseLease'>;
  readonly history: PageHistory;
  readonly bodies: Pick<BodyStore, 'getBody'>;
  /** Purges the page from the CDN; without one, the CDN keeps its copy until it expires. */
  readonly cdn?: CdnInvalidator | undefined;
  /** Keeps the tag index right when the restored version carries other tags. */
  readonly tagIndex?: TagIndex | undefined;
  readonly clock: Clock;
  /** How long the operator's seized lease lasts: the write must land within it. */
  readonly leaseSeconds: number;
  readonly retention?: Retention | undefined;
}

/** META as it is now (strongly consistent). @throws VersionRequestError `page-not-found` */
export async function liveMeta(deps: PageOpsDeps, cacheKey: CacheKey): Promise<CacheMeta> {
  const meta = await deps.cacheTable.getMeta(cacheKey.pk, { consistent: true });
  if (meta === undefined) {
    throw new VersionRequestError('page-not-found', `${cacheKey.key} has no published page`);
  }
  return meta;
}

/** The page's lease, taken from whoever holds it: a render in flight can no longer publish. */
export const seize = (
  deps: PageOpsDeps,
  cacheKey: CacheKey,
  actor: string,
  what: string,
): Promise<AcquiredLease> =>
  seizeLease(deps.cacheTable, {
    pk: cacheKey.pk,
    now: epochSeconds(deps.clock),
    durationSeconds: deps.leaseSeconds,
    owner: `${what}:${actor}`,
  });

/**
 * Longest hold: a pause an operator means to lift, not a way to freeze a page (a typo such as
 * `100000d` would also keep its rows for centuries).
 */
export const MAX_HOLD_SECONDS = 30 * 86_400;

export function checkHold(seconds: number): void {
  if (Number.isInteger(seconds) && seconds > 0 && seconds <= MAX_HOLD_SECONDS) return;
  throw new VersionRequestError(
    'hold-out-of-bounds',
    `a hold lasts 1 s to ${MAX_HOLD_SECONDS / 86_400} days, got ${seconds} s`,
  );
}

/** META's TTL: the usual one after its freshness, and never before a hold ends. */
export function ttlOf(deps: PageOpsDeps, meta: CacheMeta, holdUntil: number | undefined): number {
  const retention = deps.retention ?? DEFAULT_RETENTION;
  const usual = metaTtl(meta.generatedAt, meta.revalidateSeconds, meta.statusCode, retention);
  return Math.max(
    usual,
    meta.ttl ?? 0,
    holdUntil === undefined ? 0 : holdUntil + retention.idleSeconds,
  );
}

/**
 * The page's key tag purged from the CDN (every variant carries it), after the write: the CDN
 * may keep another generation than the one the operator set, for up to that copy's s-maxage.
 */
export const purge = (deps: PageOpsDeps, cacheKey: CacheKey): Promise<CdnPurge> =>
  deps.cdn === undefined
    ? Promise.resolve({ status: 'not-configured' })
    : deps.cdn.invalidateTags([cdnKeyTagOf(cacheKey)]);
