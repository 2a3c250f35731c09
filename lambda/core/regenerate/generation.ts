/**
 * The generation a render becomes: its body key (named after the lease, so bodies are immutable
 * and a taken-over lease's body can be found) and the META that will point at it, with the kept
 * versions and the retention it gets.
 */
import type { CacheKey, CacheMeta } from '../page/model.js';
import { isHeld } from '../page/freshness.js';
import type { AdmittedPage } from './render-policy.js';
import { DEFAULT_RETENTION, metaTtl } from '../retention.js';
import { bodyKeyOf, versionSortKey } from '../page/rows.js';
import { SETTING_DEFAULTS } from '../settings/index.js';
import type { RegenerateDeps } from './deps.js';

/** Where a render's body goes, and the META to publish once S3 answered with its ETag. */
export interface GenerationToPublish {
  readonly s3Key: string;
  meta(etag: string): CacheMeta;
}

export function generationToPublish(
  deps: Pick<RegenerateDeps, 'bodyKeyPrefix' | 'keepVersions' | 'retention'>,
  cacheKey: CacheKey,
  page: AdmittedPage,
  at: { readonly generatedAt: number; readonly current: CacheMeta | undefined; token: string },
): GenerationToPublish {
  const s3Key = bodyKeyOf(cacheKey, at.token, deps.bodyKeyPrefix);
  const versions = versionsAfter(deps, at.current, at.generatedAt, at.token);
  return {
    s3Key,
    meta: (etag) => ({
      ...versions,
      pk: cacheKey.pk,
      s3Key,
      generatedAt: at.generatedAt,
      revalidateSeconds: page.revalidateSeconds,
      etag,
      ttl: metaTtl(
        at.generatedAt,
        page.revalidateSeconds,
        page.status,
        deps.retention ?? DEFAULT_RETENTION,
      ),
      cacheKey: cacheKey.key,
      contentType: page.contentType,
      statusCode: page.status,
      location: page.location,
      tags: page.tags,
      headers: page.keptHeaders,
      contentLength: page.body.byteLength,
    }),
  };
}

/**
 * META's version attributes once this generation is published: it becomes the live version,
 * first in the kept list, followed by the one live until now (always kept: reads in flight and a
 * rollback need it) and the newest others, up to `keepVersions`. A hold carries over.
 */
function versionsAfter(
  deps: Pick<RegenerateDeps, 'keepVersions'>,
  current: CacheMeta | undefined,
  generatedAt: number,
  token: string,
): Pick<CacheMeta, 'currentSk' | 'versionSks' | 'holdUntil'> {
  const sk = versionSortKey(generatedAt, token);
  const keep = deps.keepVersions ?? SETTING_DEFAULTS.keepVersions;
  const previous = current?.versionSks ?? [];
  const live = current?.currentSk !== undefined ? [current.currentSk] : [];
  const ordered = [sk, ...live, ...previous.filter((other) => !live.includes(other))];
  return {
    currentSk: sk,
    versionSks: [...new Set(ordered)].slice(0, keep),
    holdUntil: isHeld(current, generatedAt) ? current?.holdUntil : undefined,
  };
}
