/**
 * 404 floods stay cheap: a 404 or 410 of a path never published, whose body is at most
 * `goneInlineMaxBytes`, is kept whole in one small row (`META#GONE`) written with the lease's
 * release in one transaction: no body object, no version row, no tag rows. A larger one, a
 * tagged one, a variant's, or one at a path that has a META (a page taken down), is published as
 * a page, so FaceTheory readers, tag revalidations and the page's history see it.
 */
import type { CacheKey, CacheMeta, GonePage, Lease } from '../page/model.js';
import { epochSeconds } from '../clock.js';
import { LeaseLostError, RevalidatedDuringRenderError } from '../errors.js';
import { DEFAULT_RETENTION, metaTtl } from '../retention.js';
import { SETTING_DEFAULTS } from '../settings/index.js';
import type { RegenerateDeps } from './deps.js';
import type { AdmittedPage } from './render-policy.js';
import { pageDigest } from './unchanged.js';

const GONE_STATUSES = new Set([404, 410]);

/** The row to keep for the render, or undefined when it is published as a page. */
export function goneToStore(
  deps: Pick<RegenerateDeps, 'goneInlineMaxBytes' | 'retention'>,
  cacheKey: CacheKey,
  page: AdmittedPage,
  at: { readonly current: CacheMeta | undefined; readonly generatedAt: number },
): GonePage | undefined {
  const max = deps.goneInlineMaxBytes ?? SETTING_DEFAULTS.goneInlineMaxBytes;
  if (at.current !== undefined || !GONE_STATUSES.has(page.status)) return undefined;
  // A tagged 404 is published as a page, so a revalidation of its tags finds it.
  if (page.body.byteLength > max || cacheKey.variant || page.tags.length > 0) return undefined;
  return {
    pk: cacheKey.pk,
    generatedAt: at.generatedAt,
    revalidateSeconds: page.revalidateSeconds,
    statusCode: page.status,
    contentType: page.contentType,
    headers: page.keptHeaders,
    body: page.body,
    etag: `"${pageDigest(page).slice(0, 32)}"`,
    cacheKey: cacheKey.key,
    ttl: metaTtl(
      at.generatedAt,
      page.revalidateSeconds,
      page.status,
      deps.retention ?? DEFAULT_RETENTION,
    ),
  };
}

/**
 * Writes the row and releases the lease in one transaction (the lease's conditions, as a
 * publish's). @returns 'lease-lost' (nothing written), 'revalidated' (a revalidation marked
 * LOCK during the render: render again) @throws TransactionConflictError, a store error
 */
export async function storeGone(
  deps: Pick<RegenerateDeps, 'cacheTable' | 'clock'>,
  lease: Lease,
  gone: GonePage,
): Promise<'stored' | 'lease-lost' | 'revalidated'> {
  try {
    await deps.cacheTable.storeGone({ lease, gone, now: epochSeconds(deps.clock) });
    return 'stored';
  } catch (error) {
    if (error instanceof LeaseLostError) return 'lease-lost';
    if (error instanceof RevalidatedDuringRenderError) return 'revalidated';
    throw error;
  }
}
