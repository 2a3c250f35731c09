/**
 * What a page address given by a person or a webhook is, read the same way by the revalidate
 * endpoint and every CLI command (revalidate, inspect, rollback, hold, release): a path with its
 * query (`/blog/x?page=2`), or an absolute http(s) URL pasted from a browser, whose scheme and host
 * are dropped (the tenant is named apart). The fragment never reaches a server, so `/x#top` names
 * the page `/x`. Anything else (`blog/x`, `ftp://host/x`) is refused, never keyed as it stands.
 */
import { InvalidCacheKeyError, InvalidKeyReason } from '../errors.js';

/** The parts of an address the cache key is built from (`normaliseCacheKey`'s input). */
export interface PageAddress {
  /** Still percent-encoded, as a request would carry it. */
  readonly rawPath: string;
  /** Without `?`; '' when none. */
  readonly rawQueryString: string;
}

const HTTP_ORIGIN = /^https?:\/\/[^/?#]*/i;

/**
 * The path and query an address names.
 * @throws InvalidCacheKeyError (`invalid-path`) for what is neither a path nor an http(s) URL
 */
export function parsePageAddress(address: string): PageAddress {
  const origin = HTTP_ORIGIN.exec(address)?.[0];
  const rest = origin === undefined ? address : address.slice(origin.length);
  const target = rest.split('#', 1)[0] ?? '';
  const pathAndQuery = origin !== undefined && !target.startsWith('/') ? `/${target}` : target;
  if (!pathAndQuery.startsWith('/')) {
    throw new InvalidCacheKeyError(
      InvalidKeyReason.InvalidPath,
      `"${address}" is neither a path starting with "/" nor an http(s) URL`,
    );
  }
  const queryAt = pathAndQuery.indexOf('?');
  return queryAt === -1
    ? { rawPath: pathAndQuery, rawQueryString: '' }
    : { rawPath: pathAndQuery.slice(0, queryAt), rawQueryString: pathAndQuery.slice(queryAt + 1) };
}
