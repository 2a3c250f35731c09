/**
 * The one environment variable of CDN purges, shared by the construct (which sets it) and the
 * functions (which read it), so the name cannot drift between them. No SDK import: the CDK app
 * loads this file too.
 */
import { ConfigError } from '../core/errors.js';

/**
 * The CloudFront distribution a function purges by cache tag. Set by `wireCdnPurge` (lib/isr-cdn.ts)
 * with the grant; unset, purges answer 'not-configured'.
 */
export const CDN_DISTRIBUTION_ID_ENV = 'ISR_CDN_DISTRIBUTION_ID';

/** CloudFront distribution ids are upper-case letters and digits (`E2QWRUHAPOMQZL`). */
const DISTRIBUTION_ID = /^[A-Z0-9]{1,128}$/;

/** The distribution id from the environment, or undefined; a malformed one fails at cold start. */
export function cdnDistributionIdOf(env: Record<string, string | undefined>): string | undefined {
  const value = env[CDN_DISTRIBUTION_ID_ENV]?.trim();
  if (value === undefined || value === '') return undefined;
  if (!DISTRIBUTION_ID.test(value)) {
    throw new ConfigError(
      `${CDN_DISTRIBUTION_ID_ENV} is not a CloudFront distribution id: ${value}`,
    );
  }
  return value;
}
