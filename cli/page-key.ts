/**
 * An operator's URL (`/blog/x?page=2`, or a full `https://site/blog/x`, read by
 * `parsePageAddress` as the revalidate endpoint reads it) turned into the cache key the origin
 * would use for it: the same normalisation, allow-listed parameters and tenant rules.
 */
import { cacheKeyFor } from '../lambda/core/page/cache-key.js';
import type { CacheKey } from '../lambda/core/page/model.js';
import { InvalidCacheKeyError, InvalidKeyReason } from '../lambda/core/errors.js';
import { parsePageAddress } from '../lambda/core/revalidate/page-address.js';
import type { OpsSettings } from '../local/endpoints-file.js';
import { UsageError } from './errors.js';
import { keyPolicyOf } from './target.js';

export function cacheKeyOf(
  url: string,
  tenant: string | undefined,
  settings: OpsSettings,
): CacheKey {
  const tenancy = settings.tenantHeader === undefined ? undefined : { tenants: settings.tenants };
  try {
    return cacheKeyFor(tenancy, { tenant, ...parsePageAddress(url) }, keyPolicyOf(settings));
  } catch (error) {
    if (error instanceof InvalidCacheKeyError)
      throw new UsageError(refusal(error, url, tenant, settings));
    throw error;
  }
}

/** How the CLI words a refusal of the tenancy rule or the key, for an operator. */
function refusal(
  error: InvalidCacheKeyError,
  url: string,
  tenant: string | undefined,
  settings: OpsSettings,
): string {
  switch (error.reason) {
    case InvalidKeyReason.MissingTenant:
      return `this service is multi-tenant (${settings.tenantHeader}): pass --tenant`;
    case InvalidKeyReason.UnexpectedTenant:
      return 'this service is single-tenant: drop --tenant';
    case InvalidKeyReason.UnknownTenant:
      return `tenant ${tenant} is not served here (${settings.tenants?.join(', ')})`;
    default:
      return `${url} names no page: ${error.message}`;
  }
}
