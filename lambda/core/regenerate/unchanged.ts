/**
 * An unchanged render writes almost nothing. When what a render would store (status, type,
 * location, kept headers, tags, body) hashes to the live generation's digest, no body, version
 * row or CDN purge is made: META's freshness moves on in one conditional UpdateItem, then LOCK is
 * released and REQ# settled as for any answer (3 WCU after the render, against a publish's
 * four-item transaction, 8 WCU, and an S3 PUT).
 *
 * Why that write needs no transaction with LOCK. A publish's transaction checks the lease at the
 * moment META changes, so a stale writer cannot put an older page over a newer one. Here no page
 * changes hands: the write is a compare-and-set on META itself, applied only while META still
 * holds the very generation (`s3_key`, `generated_at`), revalidation mark and hold that this
 * render read under its lease. Every other writer of META changes one of those: a publish (a new
 * key and time), a revalidation (its mark, or META gone), an operator's rollback (another key) or
 * hold. So a write that lands proves nobody published, marked or held the page since the render
 * began, and what it states (the live body was still the page at `generated_at`, the render's
 * start) is true. The lease is still checked on this caller's clock before the write (as the
 * transaction's `lease_expires_at > :now` is), its token when LOCK is released after it; a token
 * lost in between (a takeover) cannot have published anything, or the write would have failed.
 */
import { createHash } from 'node:crypto';
import { epochSeconds } from '../clock.js';
import { LeaseLostError, NewerGenerationError, RevalidatedDuringRenderError } from '../errors.js';
import type { Need } from '../page/freshness.js';
import { isLeaseLive } from '../page/lease.js';
import type { CacheMeta, Lease } from '../page/model.js';
import { DEFAULT_RETENTION, metaTtl } from '../retention.js';
import type { RegenerateDeps } from './deps.js';
import type { PublishResult } from './publish.js';
import type { AdmittedPage } from './render-policy.js';

/** Changes whenever the encoding below does, so an old digest never matches a new one. */
const DIGEST_VERSION = 'isr-page-v1';

/**
 * SHA-256 of everything a render stores, each field framed by its name and byte length. Framed,
 * two different pages never feed the hash the same bytes; SHA-256 then makes equal digests of
 * different inputs a collision, which no one has ever exhibited (about 2^128 work to find one by
 * search; an accidental one, 2^-256 per comparison). So equal digests mean an equal page.
 */
export function pageDigest(page: AdmittedPage): string {
  const hash = createHash('sha256');
  const field = (name: string, value: string | Uint8Array): void => {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    hash.update(`${name}:${bytes.byteLength}:`);
    hash.update(bytes);
  };
  field('version', DIGEST_VERSION);
  field('status', String(page.status));
  field('type', page.contentType);
  field('location', page.location ?? '');
  const headers = Object.entries(page.keptHeaders ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  field('headers', JSON.stringify(headers));
  field('tags', JSON.stringify([...page.tags].sort()));
  field('body', page.body);
  return hash.digest('hex');
}

/**
 * Whether a render only refreshes the live generation: META was written with a digest (a row
 * another writer made has none) equal to the render's, and is not the broken generation a
 * waiting viewer needs replaced (its body is gone: only a new one answers).
 */
export const isUnchanged = (
  current: CacheMeta | undefined,
  digest: string,
  need: Need,
): current is CacheMeta =>
  current?.digest !== undefined &&
  current.digest === digest &&
  !(need.kind === 'page' && need.brokenBodyKey === current.s3Key);

/**
 * META once an unchanged render refreshed it: the render's freshness and TTL, the unchanged count
 * one more, the time the content was first published kept (Last-Modified), and what a publish
 * would clear (a revalidation's mark, a failure record) cleared.
 */
export function refreshedMeta(
  deps: Pick<RegenerateDeps, 'retention'>,
  current: CacheMeta,
  page: Pick<AdmittedPage, 'revalidateSeconds' | 'status'>,
  generatedAt: number,
): CacheMeta {
  return {
    ...current,
    generatedAt,
    revalidateSeconds: page.revalidateSeconds,
    ttl: metaTtl(
      generatedAt,
      page.revalidateSeconds,
      page.status,
      deps.retention ?? DEFAULT_RETENTION,
    ),
    modifiedAt: current.modifiedAt ?? current.generatedAt,
    unchangedRenders: (current.unchangedRenders ?? 0) + 1,
    revalidatedAt: undefined,
    revalidatedBy: undefined,
    failures: undefined,
  };
}

/** How a refresh ended: the refreshed META, or why nothing was written (as a publish says it). */
export type RefreshResult =
  | { readonly status: 'refreshed'; readonly meta: CacheMeta }
  | Exclude<PublishResult, { readonly status: 'published' } | { readonly status: 'duplicate' }>;

/**
 * Refreshes the live generation under the lease (see the module comment): nothing is written
 * once the lease has run out on this caller's clock or when the render started before the live
 * generation (never backwards).
 * @throws a store error other than the refusals `RefreshResult` names
 */
export async function refreshUnchanged(
  deps: Pick<RegenerateDeps, 'cacheTable' | 'clock' | 'retention'>,
  input: {
    readonly lease: Lease;
    readonly observed: CacheMeta;
    readonly page: AdmittedPage;
    readonly generatedAt: number;
  },
): Promise<RefreshResult> {
  const { observed, generatedAt } = input;
  if (!isLeaseLive(input.lease, epochSeconds(deps.clock))) return { status: 'lease-lost' };
  if (generatedAt < observed.generatedAt) {
    return { status: 'superseded', currentGeneratedAt: observed.generatedAt };
  }
  const meta = refreshedMeta(deps, observed, input.page, generatedAt);
  try {
    await deps.cacheTable.refreshGeneration({ observed, meta });
    return { status: 'refreshed', meta };
  } catch (error) {
    if (error instanceof LeaseLostError) return { status: 'lease-lost' };
    if (error instanceof RevalidatedDuringRenderError) return { status: 'revalidated' };
    if (error instanceof NewerGenerationError) {
      return { status: 'superseded', currentGeneratedAt: error.currentGeneratedAt };
    }
    throw error;
  }
}
