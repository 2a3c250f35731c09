/**
 * What of a viewer's request reaches the upstream on a pass-through, and what of the upstream's
 * answer reaches the viewer: everything but hop-by-hop headers (RFC 9110 §7.6.1) and the headers
 * the service or a framework treats as privileged (their one list: `traffic-rules.ts`, which the
 * edge function strips too).
 */
import {
  isPrivilegedHeader,
  PRIVILEGED_HEADER_PREFIXES,
  PRIVILEGED_HEADERS,
} from './traffic-rules.js';

/** Hop-by-hop headers: they describe one connection, never the request (RFC 9110 §7.6.1). */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

export type HeaderPairs = readonly (readonly [string, string])[];

/**
 * The SigV4 headers of CloudFront's origin access control ("Restrict access to an AWS Lambda
 * function URL origin",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-restricting-access-to-lambda.html):
 * CloudFront signs every origin request, replacing a viewer's Authorization, and the function
 * URL's event may carry them (AWS does not say it removes them). They are CloudFront's, not the
 * viewer's: a pass-through never sends them on.
 */
export const ORIGIN_SIGNING_HEADERS: readonly string[] = [
  'authorization',
  'x-amz-date',
  'x-amz-security-token',
  'x-amz-content-sha256',
];

/**
 * The viewer's headers as the upstream may get them: lower-cased, without hop-by-hop headers
 * (and those `Connection` names), Host, the origin access control's signature, privileged ones,
 * and `internal` (the secret's header).
 */
export function forwardedRequestHeaders(
  headers: HeaderPairs,
  internal: readonly string[],
): [string, string][] {
  const dropped = new Set([
    ...HOP_BY_HOP_HEADERS,
    ...ORIGIN_SIGNING_HEADERS,
    'host',
    ...internal.map((name) => name.toLowerCase()),
    ...connectionTokens(headers),
  ]);
  return headers
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .filter(
      ([name]) =>
        !dropped.has(name) &&
        !isPrivilegedHeader(name, PRIVILEGED_HEADERS, PRIVILEGED_HEADER_PREFIXES),
    );
}

/** The upstream's answer headers as the viewer gets them: all but hop-by-hop ones. */
export function forwardedAnswerHeaders(headers: HeaderPairs): [string, string][] {
  const dropped = new Set([...HOP_BY_HOP_HEADERS, ...connectionTokens(headers)]);
  return headers
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .filter(([name]) => !dropped.has(name));
}

/** Header names a `Connection` header lists: hop-by-hop for this one connection. */
const connectionTokens = (headers: HeaderPairs): string[] =>
  headers
    .filter(([name]) => name.toLowerCase() === 'connection')
    .flatMap(([, value]) => value.split(','))
    .map((token) => token.trim().toLowerCase())
    .filter((token) => token !== '');

/** The viewers' host and scheme, as the upstream is told them (`X-Forwarded-Host`/`-Proto`). */
export interface PublicOrigin {
  readonly host: string;
  readonly proto: 'http' | 'https';
}

/** `publicOrigin` (a validated http(s) origin) as the upstream is told it; undefined: unset. */
export function publicOriginOf(origin: string | undefined): PublicOrigin | undefined {
  if (origin === undefined) return undefined;
  const url = new URL(origin);
  return { host: url.host, proto: url.protocol === 'http:' ? 'http' : 'https' };
}

/**
 * A `Location` naming the upstream's own host (in any scheme: an app behind a proxy may say
 * `https` of an `http` upstream) made relative, so a viewer never sees the upstream's address;
 * `prefix` is the upstream URL's path, taken off too. Any other `Location` is kept as it is.
 */
export function upstreamRelativeLocation(location: string, upstream: URL): string {
  let target: URL;
  try {
    target = new URL(location, upstream);
  } catch {
    return location;
  }
  if (target.host !== upstream.host) return location;
  const prefix = upstream.pathname.replace(/\/$/, '');
  const path = target.pathname.startsWith(`${prefix}/`)
    ? target.pathname.slice(prefix.length)
    : target.pathname;
  return `${path}${target.search}${target.hash}`;
}
