/**
 * What CloudFront does to an origin's answer on its way to the viewer:
 * - it refuses an answer whose status line and headers pass 20,480 bytes ("Quotas", General
 *   quotas, "Maximum length of a request or an origin response, including headers and query
 *   strings, but not including the body content",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/cloudfront-limits.html):
 *   the viewer gets a 502 from CloudFront;
 * - it removes or replaces `Set-Cookie` (kept only when the behaviour forwards cookies),
 *   `Trailer`, `Transfer-Encoding`, `Upgrade`, and `Vary` values other than `Accept-Encoding`,
 *   `Cookie` and the headers it forwards; it sets `Via` ("Request and response behavior for
 *   custom origins", HTTP response headers that CloudFront removes or replaces,
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/RequestAndResponseBehaviorCustomOrigin.html);
 * - the response headers policy removes and sets headers ("Add or remove HTTP headers in
 *   CloudFront responses with a policy",
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/modifying-response-headers.html);
 * - it says how it served the request in `X-Cache` (`Hit`, `RefreshHit`, `Miss`, `Error`,
 *   `FunctionGeneratedResponse` ... `from cloudfront`, the `x-edge-result-type` of its logs,
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/standard-logs-reference.html)
 *   and, on a hit, how old the object is in `Age`.
 */
import { MAX_ORIGIN_HEADER_BYTES } from '../../lambda/core/serve/header-budget.js';
import type { EdgeBehaviour } from './config.js';
import { forwardsCookies, forwardsHeader, type Pairs } from './requests.js';

/** CloudFront's limit on an origin answer's status line and headers, in bytes: the origin's own. */
export const MAX_ORIGIN_RESPONSE_HEADER_BYTES = MAX_ORIGIN_HEADER_BYTES;

/** How CloudFront served a request (`X-Cache: <result> from cloudfront`). */
export const EdgeResult = {
  Hit: 'Hit',
  RefreshHit: 'RefreshHit',
  Miss: 'Miss',
  Error: 'Error',
  FunctionGeneratedResponse: 'FunctionGeneratedResponse',
} as const;
export type EdgeResult = (typeof EdgeResult)[keyof typeof EdgeResult];

/**
 * The bytes of an answer's status line and headers, as CloudFront counts them: counted here on
 * the wire's pairs, apart from the origin's `headerBytesOf`, so the stand-in checks that rule.
 */
export function headerBytes(status: number, headers: Pairs): number {
  let bytes = Buffer.byteLength(`HTTP/1.1 ${status} \r\n\r\n`);
  for (const [name, value] of headers) bytes += Buffer.byteLength(`${name}: ${value}\r\n`);
  return bytes;
}

const REMOVED = new Set(['trailer', 'transfer-encoding', 'upgrade', 'connection', 'keep-alive']);

/** The Vary CloudFront passes on: only names it may vary on for this behaviour. */
function keptVary(value: string, behaviour: EdgeBehaviour): string | undefined {
  const kept = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => {
      const lower = name.toLowerCase();
      return (
        lower === 'accept-encoding' ||
        lower === 'cookie' ||
        forwardsHeader(behaviour.cachePolicy, behaviour.originRequestPolicy, lower)
      );
    });
  return kept.length === 0 ? undefined : kept.join(', ');
}

export interface ViewerHeadersInput {
  readonly behaviour: EdgeBehaviour | undefined;
  readonly result: EdgeResult;
  /** Seconds in the cache, on a hit. */
  readonly age?: number | undefined;
  readonly requestId: string;
}

/** The headers a viewer gets for an origin's (or a stored) answer. */
export function viewerHeaders(headers: Pairs, input: ViewerHeadersInput): Pairs {
  const { behaviour } = input;
  const cookies =
    behaviour === undefined ||
    forwardsCookies(behaviour.cachePolicy, behaviour.originRequestPolicy);
  const policy = behaviour?.responseHeadersPolicy;
  const out: Pairs = [];
  for (const [name, value] of headers) {
    if (REMOVED.has(name) || name === 'via' || name === 'x-cache' || name === 'age') continue;
    if (name === 'set-cookie' && !cookies) continue;
    if (policy?.remove.includes(name) === true) continue;
    if (name === 'vary' && behaviour !== undefined) {
      const vary = keptVary(value, behaviour);
      if (vary !== undefined) out.push([name, vary]);
      continue;
    }
    out.push([name, value]);
  }
  for (const header of policy?.set ?? []) {
    const present = out.some(([name]) => name === header.name);
    if (present && !header.override) continue;
    if (present) out.splice(0, out.length, ...out.filter(([name]) => name !== header.name));
    out.push([header.name, header.value]);
  }
  if (input.age !== undefined) out.push(['age', String(input.age)]);
  out.push(
    ['x-cache', `${input.result} from cloudfront`],
    ['via', '1.1 local.cloudfront.net (CloudFront)'],
    ['x-amz-cf-pop', 'LOCAL1-P1'],
    ['x-amz-cf-id', input.requestId],
  );
  return out;
}

/** A header's value in pairs (several joined as one list), lower-case name. */
export const headerOf = (headers: Pairs, name: string): string | undefined => {
  const values = headers.filter(([header]) => header === name).map(([, value]) => value);
  return values.length === 0 ? undefined : values.join(', ');
};

/** Pairs as one record per name (Set-Cookie aside: it is never read as one value). */
export const recordOf = (headers: Pairs): Record<string, string> =>
  Object.fromEntries(
    [...new Set(headers.map(([name]) => name))]
      .filter((name) => name !== 'set-cookie')
      .map((name) => [name, headerOf(headers, name) ?? '']),
  );
