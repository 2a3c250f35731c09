/**
 * A revalidation previewed (`"dry_run": true`; `isr revalidate --dry-run`): the pages it would
 * mark (per tag, counted as the 202 counts them), the CDN items it would purge and what it would
 * cost, from the tag index's counts alone. It writes nothing: no REQ# claim, mark, tag time,
 * intent or invalidation. Dry runs have their own rate limit (`DryRunLimiter`).
 */
import type { Clock } from '../clock.js';
import { cdnKeyTagOf, cdnTagOf } from '../page/cache-tags.js';
import type { TagPageCounter } from '../page/ports.js';
import type { JsonValue } from '../idempotency.js';
import { COUNTED_PAGES_PER_TAG } from './fan-out.js';
import { revalidationOf, type CanonicalRevalidation, type RevalidatePolicy } from './request.js';

/** Dry runs a tenant may make a minute, per revalidate container, unless configured. */
export const DEFAULT_DRY_RUNS_PER_MINUTE = 10;

/** WCU a regeneration writes (docs/PERFORMANCE.md, "What a page costs"): changed, unchanged. */
const REGENERATION_WCU = { changed: 10, unchanged: 5 } as const;

/**
 * A fixed window per tenant, in memory: a preview costs reads, and counting it in the table
 * would make it write. Per container, so the function's reserved concurrency bounds the total.
 */
export class DryRunLimiter {
  readonly #windows = new Map<string, { readonly minute: number; used: number }>();
  constructor(
    private readonly clock: Clock,
    private readonly perMinute: number = DEFAULT_DRY_RUNS_PER_MINUTE,
  ) {}

  /** @returns undefined when the dry run may go, else the seconds until it may. */
  take(tenant: string | null): number | undefined {
    const nowMs = this.clock.now();
    const minute = Math.floor(nowMs / 60_000);
    const key = tenant ?? '_';
    const window = this.#windows.get(key);
    if (window === undefined || window.minute !== minute) {
      this.#windows.set(key, { minute, used: 1 });
      return undefined;
    }
    if (window.used >= this.perMinute) return Math.ceil(((minute + 1) * 60_000 - nowMs) / 1000);
    window.used += 1;
    return undefined;
  }
}

/**
 * What the revalidation would do: pages per tag (exact up to `COUNTED_PAGES_PER_TAG`, else
 * estimated), the CDN purge's items (one CloudFront path each), and the expected writes: one
 * mark per page, two deletes per path (hit-for-pass mark, gone row), and with `regenerate` the
 * regenerations' own writes, changed and unchanged.
 */
export async function previewRevalidation(
  tagIndex: TagPageCounter,
  canonical: CanonicalRevalidation,
  policy: RevalidatePolicy,
): Promise<{ [field: string]: JsonValue }> {
  const revalidation = revalidationOf(canonical, 'dry-run', policy);
  const { tenant } = revalidation;
  const counts = await Promise.all(
    canonical.tags.map((tag) => tagIndex.countPages(tenant, tag, COUNTED_PAGES_PER_TAG)),
  );
  const tagPages = counts.reduce((sum, count) => sum + count.count, 0);
  const pages = canonical.paths.length + tagPages;
  const cdnItems = [
    ...canonical.tags.map((tag) => `#${cdnTagOf(tenant, tag)}`),
    ...revalidation.keys.map((key) => `#${cdnKeyTagOf(key)}`),
  ];
  const regenerations = canonical.regenerate ? pages : 0;
  return {
    dry_run: true,
    mode: canonical.mode,
    regenerate: canonical.regenerate,
    tenant: canonical.tenant,
    pages: {
      paths: canonical.paths.length,
      tags: canonical.tags.map((tag, at) => ({
        tag,
        pages: counts[at]?.count ?? 0,
        exact: counts[at]?.exact ?? true,
      })),
      total: pages,
      exact: counts.every((count) => count.exact),
    },
    cdn: { items: cdnItems, cloudfront_paths: cdnItems.length },
    expected: {
      mark_wcu: pages + 2 * canonical.paths.length,
      regenerations,
      regeneration_wcu: {
        changed: regenerations * REGENERATION_WCU.changed,
        unchanged: regenerations * REGENERATION_WCU.unchanged,
      },
      cloudfront_paths: cdnItems.length,
    },
  };
}
