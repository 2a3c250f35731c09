/**
 * The rules between the routing settings and the others. They run for the origin, which reads
 * every setting they name, so a cold start refuses what synth does (synth runs the origin's
 * reader on the environment it writes).
 */
import type { SettingRule, Values } from './engine.js';
import { MAX_CACHE_KEY_HEADERS } from './routing-settings.js';

/** CloudFront's default quota of cache behaviours per distribution, the default one aside. */
export const MAX_BEHAVIOURS = 25;
/** CloudFront's quota of query strings in one cache policy's key. */
export const MAX_CACHE_KEY_QUERY_STRINGS = 10;

const listOf = (values: Values, key: string): readonly string[] =>
  (values[key] as readonly string[] | undefined) ?? [];

const ROUTED = ['staticPrefixes', 'bypassPaths', 'bypassCookies', 'bypassHeaders'] as const;

/** Routing sends requests to the upstream: without one (the demo renderer) there is nowhere to go. */
const routingNeedsUpstream: SettingRule = {
  keys: [...ROUTED, 'renderOriginUrl'],
  readers: ['origin'],
  check: (values, nameOf) => {
    if (values.renderOriginUrl !== undefined) return [];
    const given = ROUTED.filter((key) => listOf(values, key).length > 0);
    if (given.length === 0) return [];
    return [
      `${given.map(nameOf).join(', ')} route requests to the upstream: they need ${nameOf('renderOriginUrl')}`,
    ];
  },
};

/**
 * The tenant header is every request's: as a bypass header it would pass everything. A variant
 * header must be neither (it selects a cached entry). CloudFront keys on at most 10 headers:
 * the tenant header, the variant headers and, with an upstream, the pass key the edge gives a
 * passed request (`PASS_KEY_HEADER`, lib/edge/viewer-request-function.ts).
 */
const bypassHeadersFitTheKey: SettingRule = {
  keys: ['bypassHeaders', 'tenantHeader', 'variantHeaders', 'renderOriginUrl'],
  readers: ['origin'],
  check: (values, nameOf) => {
    const headers = listOf(values, 'bypassHeaders');
    const tenant = values.tenantHeader as string | undefined;
    const variants = ((values.variantHeaders as { name: string }[] | undefined) ?? []).map(
      (rule) => rule.name,
    );
    const problems: string[] = [];
    if (tenant !== undefined && headers.includes(tenant)) {
      problems.push(`${nameOf('bypassHeaders')} must not name the tenant header (${tenant})`);
    }
    for (const name of variants.filter((name) => name === tenant || headers.includes(name))) {
      problems.push(
        `${nameOf('variantHeaders')} must not name the tenant header or a bypass header (${name})`,
      );
    }
    const passKey = values.renderOriginUrl === undefined ? 0 : 1;
    const keyed = variants.length + (tenant === undefined ? 0 : 1) + passKey;
    if (keyed > MAX_CACHE_KEY_HEADERS) {
      problems.push(
        `${nameOf('variantHeaders')}, the tenant header and the pass key make ` +
          `${keyed} headers in CloudFront's cache key, at most ${MAX_CACHE_KEY_HEADERS}`,
      );
    }
    return problems;
  },
};

/** Each static prefix and bypass path is a behaviour. */
const behavioursWithinQuota: SettingRule = {
  keys: ['staticPrefixes', 'bypassPaths'],
  readers: ['origin'],
  check: (values, nameOf) => {
    const count = listOf(values, 'staticPrefixes').length + listOf(values, 'bypassPaths').length;
    if (count <= MAX_BEHAVIOURS - 1) return [];
    return [
      `${nameOf('staticPrefixes')} and ${nameOf('bypassPaths')} make ${count} CloudFront ` +
        `behaviours, at most ${MAX_BEHAVIOURS - 1} beside the default one (the account's quota)`,
    ];
  },
};

/** The cache key lists the allowed parameters by name: CloudFront lists at most 10. */
const allowedParamsFitTheKey: SettingRule = {
  keys: ['allowedQueryParams'],
  readers: ['origin'],
  check: (values, nameOf) => {
    const count = listOf(values, 'allowedQueryParams').length;
    if (count <= MAX_CACHE_KEY_QUERY_STRINGS) return [];
    return [
      `${nameOf('allowedQueryParams')} names ${count} parameters, at most ` +
        `${MAX_CACHE_KEY_QUERY_STRINGS} in CloudFront's cache key`,
    ];
  },
};

export const ROUTING_RULES: readonly SettingRule[] = [
  routingNeedsUpstream,
  bypassHeadersFitTheKey,
  behavioursWithinQuota,
  allowedParamsFitTheKey,
];
