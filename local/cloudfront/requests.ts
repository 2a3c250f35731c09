/**
 * What of a viewer's request CloudFront keys on and what it forwards to the origin, from the
 * behaviour's policies:
 * - the cache key holds the path and exactly the headers, cookies and query strings the cache
 *   policy names, and the normalised Accept-Encoding when the policy turns on Gzip or Brotli
 *   ("Understand the cache key",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-the-cache-key.html;
 *   "Cache compressed objects",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/ServingCompressedFiles.html);
 * - the origin request carries what is in the cache key plus what the origin request policy
 *   adds, nothing else ("Control origin requests with a policy",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/controlling-origin-requests.html);
 * - query parameters keep the viewer's order: CloudFront does not sort them ("Cache content
 *   based on query string parameters",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/QueryStringParameters.html).
 */
import type { CachePolicyConfig, ItemsConfig, OriginRequestPolicyConfig } from './config.js';

/** A viewer request as the behaviour sees it (after the viewer-request function). */
export interface ViewerRequest {
  readonly method: string;
  /** Raw, percent-encoded path. */
  readonly uri: string;
  /** Raw query string without `?`. */
  readonly querystring: string;
  /** Lower-case names; a repeated header as an array. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly clientIp: string;
}

export type Pairs = [string, string][];

/** `name=value` pairs of a raw query string, as received. */
export function queryPairs(querystring: string): Pairs {
  return querystring
    .split('&')
    .filter((part) => part !== '')
    .map((part): [string, string] => {
      const at = part.indexOf('=');
      return at < 0 ? [part, ''] : [part.slice(0, at), part.slice(at + 1)];
    });
}

/** The viewer's cookies, in order (`Cookie` header(s)). */
export function cookiePairs(headers: ViewerRequest['headers']): Pairs {
  const raw = headers.cookie;
  const values = raw === undefined ? [] : typeof raw === 'string' ? [raw] : [...raw];
  return values
    .flatMap((value) => value.split(';'))
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '')
    .map((pair): [string, string] => {
      const at = pair.indexOf('=');
      return at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    });
}

/** Header pairs but Cookie (lower-case names; a repeated header as several pairs). */
export function headerPairs(headers: ViewerRequest['headers']): Pairs {
  return Object.entries(headers).flatMap(([name, value]): Pairs => {
    const lower = name.toLowerCase();
    if (value === undefined || lower === 'cookie') return [];
    return (typeof value === 'string' ? [value] : [...value]).map((one) => [lower, one]);
  });
}

type Behavior = ItemsConfig<string>['behavior'];

/** Whether a name is selected by an items config (`whitelist`, `allExcept`, `all`...). */
function selects(config: ItemsConfig<Behavior>, name: string, lowerCase: boolean): boolean {
  const key = lowerCase ? name.toLowerCase() : name;
  switch (config.behavior) {
    case 'none':
      return false;
    case 'whitelist':
      return config.items.includes(key);
    case 'allExcept':
      return !config.items.includes(key);
    default:
      return true; // all, allViewer, allViewerAndWhitelistCloudFront
  }
}

/**
 * The Accept-Encoding CloudFront keys on and sends: `br`/`gzip` only, when the viewer accepts
 * them and the policy turns them on; undefined otherwise.
 */
export function normalisedAcceptEncoding(
  policy: CachePolicyConfig,
  headers: ViewerRequest['headers'],
): string | undefined {
  const raw = headers['accept-encoding'];
  const accepted = (typeof raw === 'string' ? raw : (raw ?? []).join(','))
    .split(',')
    .map((token) => token.split(';')[0]?.trim().toLowerCase());
  const kept = [
    ...(policy.brotli && accepted.includes('br') ? ['br'] : []),
    ...(policy.gzip && accepted.includes('gzip') ? ['gzip'] : []),
  ];
  return kept.length === 0 ? undefined : kept.join(',');
}

/** The cache key of a request under a policy: one string, equal for requests CloudFront treats alike. */
export function edgeCacheKeyOf(policy: CachePolicyConfig, request: ViewerRequest): string {
  const headers = headerPairs(request.headers).filter(([name]) =>
    selects(policy.headers, name, true),
  );
  const cookies = cookiePairs(request.headers).filter(([name]) =>
    selects(policy.cookies, name, false),
  );
  const query = queryPairs(request.querystring).filter(([name]) =>
    selects(policy.queryStrings, name, false),
  );
  headers.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify({
    path: request.uri,
    query,
    headers,
    cookies,
    encoding: normalisedAcceptEncoding(policy, request.headers) ?? null,
  });
}

/** What the origin request carries: the cache key's parts, and the origin request policy's. */
export interface ForwardedParts {
  readonly headers: Pairs;
  readonly cookies: Pairs;
  readonly query: Pairs;
}

/**
 * The viewer's headers, cookies and query strings CloudFront forwards under these policies. The
 * viewer's Host is forwarded only when a policy names it (otherwise the origin's own domain is
 * sent); Accept-Encoding goes as the cache policy normalised it.
 */
export function forwardedParts(
  policy: CachePolicyConfig,
  originPolicy: OriginRequestPolicyConfig | undefined,
  request: ViewerRequest,
): ForwardedParts {
  const either = (
    fromKey: ItemsConfig<Behavior>,
    fromOrigin: ItemsConfig<Behavior> | undefined,
    name: string,
    lowerCase: boolean,
  ) =>
    selects(fromKey, name, lowerCase) ||
    (fromOrigin !== undefined && selects(fromOrigin, name, lowerCase));
  const encoding = normalisedAcceptEncoding(policy, request.headers);
  const headers = headerPairs(request.headers).filter(
    ([name]) =>
      name !== 'accept-encoding' && either(policy.headers, originPolicy?.headers, name, true),
  );
  if (encoding !== undefined) headers.push(['accept-encoding', encoding]);
  return {
    headers,
    cookies: cookiePairs(request.headers).filter(([name]) =>
      either(policy.cookies, originPolicy?.cookies, name, false),
    ),
    query: queryPairs(request.querystring).filter(([name]) =>
      either(policy.queryStrings, originPolicy?.queryStrings, name, false),
    ),
  };
}

/** Whether the behaviour forwards any cookie (then CloudFront passes Set-Cookie back). */
export const forwardsCookies = (
  policy: CachePolicyConfig,
  originPolicy: OriginRequestPolicyConfig | undefined,
): boolean =>
  policy.cookies.behavior !== 'none' ||
  (originPolicy !== undefined && originPolicy.cookies.behavior !== 'none');

/** Header names a response's Vary may keep: those the behaviour forwards (see `responses.ts`). */
export const forwardsHeader = (
  policy: CachePolicyConfig,
  originPolicy: OriginRequestPolicyConfig | undefined,
  name: string,
): boolean =>
  selects(policy.headers, name, true) ||
  (originPolicy !== undefined && selects(originPolicy.headers, name, true));
