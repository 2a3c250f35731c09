/**
 * An operator's URL (`/blog/x?page=2`, or a full `https://site/blog/x`) turned into the cache key
 * the origin would use for it: the same normalisation, allow-listed parameters and tenant rules.
 */
import { normaliseCacheKey, type CacheKey } from '../lambda/core/cache-key.js';
import { InvalidCacheKeyError } from '../lambda/core/errors.js';
import type { OpsSettings } from '../local/endpoints-file.js';
import { UsageError } from './errors.js';
import { keyPolicyOf } from './target.js';

export function cacheKeyOf(
  url: string,
  tenant: string | undefined,
  settings: OpsSettings,
): CacheKey {
  if (settings.tenantHeader !== undefined && tenant === undefined) {
    throw new UsageError(`this service is multi-tenant (${settings.tenantHeader}): pass --tenant`);
  }
  if (settings.tenantHeader === undefined && tenant !== undefined) {
    throw new UsageError('this service is single-tenant: drop --tenant');
  }
  if (
    tenant !== undefined &&
    settings.tenants !== undefined &&
    !settings.tenants.includes(tenant)
  ) {
    throw new UsageError(`tenant ${tenant} is not served here (${settings.tenants.join(', ')})`);
  }
  const withoutOrigin = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const withoutFragment = withoutOrigin.split('#')[0] ?? '';
  const at = withoutFragment.indexOf('?');
  const rawPath = (at < 0 ? withoutFragment : withoutFragment.slice(0, at)) || '/';
  const rawQueryString = at < 0 ? '' : withoutFragment.slice(at + 1);
  try {
    return normaliseCacheKey({ tenant, rawPath, rawQueryString }, keyPolicyOf(settings));
  } catch (error) {
    if (error instanceof InvalidCacheKeyError) {
      throw new UsageError(`${url} names no page: ${error.message}`);
    }
    throw error;
  }
}
