/**
 * The one environment variable of CDN purges, shared by the construct (which sets it) and the
 * functions (which read it): both take it from the settings table, so the name cannot drift.
 * No SDK import: the CDK app loads this file too.
 */
import { ConfigError } from '../core/errors.js';
import { SETTINGS, valueProblems } from '../core/settings/index.js';

/**
 * The CloudFront distribution a function purges by cache tag. Set by `wireCdnPurge` (lib/isr-cdn.ts)
 * with the grant; unset, purges answer 'not-configured'.
 */
export const CDN_DISTRIBUTION_ID_ENV = SETTINGS.cdnDistributionId.env;

/** The distribution id from the environment, or undefined; a malformed one fails at cold start. */
export function cdnDistributionIdOf(env: Record<string, string | undefined>): string | undefined {
  const spec = SETTINGS.cdnDistributionId;
  const value = env[CDN_DISTRIBUTION_ID_ENV]?.trim();
  if (value === undefined || value === '') return undefined;
  const problems = valueProblems(spec, value, CDN_DISTRIBUTION_ID_ENV);
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  return value;
}
