/**
 * What of a viewer's request reaches the upstream on a pass-through, and what of the upstream's
 * answer reaches the viewer: everything but hop-by-hop headers (RFC 9110 §7.6.1) and the headers
 * the service or a framework treats as privileged. The one list of them.
 */

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

/**
 * Request headers a viewer may never send upstream: the service's own (`x-isr-*`), the Host
 * (the upstream's own is used), and those frameworks trust as coming from themselves (Next.js
 * middleware recursion, on-demand revalidation, invoke and route matching).
 */
export const PRIVILEGED_REQUEST_HEADERS: readonly string[] = [
  'host',
  'x-middleware-subrequest',
  'x-middleware-prefetch',
  'x-prerender-revalidate',
  'x-prerender-revalidate-if-generated',
  'x-matched-path',
  'x-now-route-matches',
];

/** Name prefixes of privileged request headers (the service's own, Next.js invoke headers). */
export const PRIVILEGED_REQUEST_PREFIXES: readonly string[] = ['x-isr-', 'x-invoke-'];

export type HeaderPairs = readonly (readonly [string, string])[];

/**
 * The viewer's headers as the upstream may get them: lower-cased, without hop-by-hop headers
 * (and those `Connection` names), privileged ones, and `internal` (the secret and tenant headers).
 */
export function forwardedRequestHeaders(
  headers: HeaderPairs,
  internal: readonly string[],
): [string, string][] {
  const dropped = new Set([
    ...HOP_BY_HOP_HEADERS,
    ...PRIVILEGED_REQUEST_HEADERS,
    ...internal.map((name) => name.toLowerCase()),
    ...connectionTokens(headers),
  ]);
  return headers
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .filter(
      ([name]) =>
        !dropped.has(name) &&
        !PRIVILEGED_REQUEST_PREFIXES.some((prefix) => name.startsWith(prefix)),
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
