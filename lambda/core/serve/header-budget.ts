/**
 * CloudFront refuses an origin answer whose status line and headers pass 20,480 bytes: the
 * viewer gets a 502 ("Quotas", maximum length of an origin response,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/cloudfront-limits.html).
 * A page's cache tags (up to 50 of 256 characters) and the upstream headers it keeps (up to
 * 16 KB) can pass it together, so the origin fits every answer to a budget by a stated rule,
 * and says what it cut: first `Link` (hints), then cache tags from the last, never the page's
 * own key tag (a tag purge no longer reaches the page at the edge, so its shared freshness is
 * cut to the short one of a stale page), then the upstream's other headers, largest first.
 * The service's own headers and what a representation needs are never cut.
 */
import type { PageResponse } from './responses.js';

/** CloudFront's limit on an origin answer's status line and headers. */
export const MAX_ORIGIN_HEADER_BYTES = 20_480;
/**
 * What the function URL adds on the way (Date, Content-Length, Connection, x-amzn-RequestId,
 * X-Amzn-Trace-Id, the Set-Cookie lines it makes of the cookies): kept free. The response
 * format: https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html
 */
export const FUNCTION_URL_HEADER_ALLOWANCE = 1_024;
export const HEADER_BUDGET = MAX_ORIGIN_HEADER_BYTES - FUNCTION_URL_HEADER_ALLOWANCE;

/** Never cut: what makes the representation, and the service's own. */
const ESSENTIAL = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'location',
  'cache-control',
  'etag',
  'last-modified',
  'vary',
  'allow',
  'retry-after',
  'x-isr-cache',
  'cache-status',
]);

export interface HeaderFitOptions {
  /** The cache-tag header: its last tag is the page's key tag, never cut. */
  readonly cacheTagHeader: string;
  /** The shared freshness a page gets once some of its tags are cut (a stale page's). */
  readonly sharedMaxAgeWithoutTags: number;
  /** @default HEADER_BUDGET */
  readonly budget?: number;
}

/** The bytes of an answer's status line and headers as CloudFront counts them. */
export function headerBytesOf(response: Pick<PageResponse, 'status' | 'headers' | 'cookies'>) {
  let bytes = `HTTP/1.1 ${response.status} \r\n\r\n`.length;
  for (const [name, value] of Object.entries(response.headers)) {
    bytes += Buffer.byteLength(`${name}: ${value}\r\n`);
  }
  for (const cookie of response.cookies ?? [])
    bytes += Buffer.byteLength(`set-cookie: ${cookie}\r\n`);
  return bytes;
}

/** The answer within the budget, and what was cut (for the log line); unchanged when it fits. */
export function fitAnswerHeaders(
  response: PageResponse,
  options: HeaderFitOptions,
): { readonly response: PageResponse; readonly trimmed: readonly string[] } {
  const budget = options.budget ?? HEADER_BUDGET;
  if (headerBytesOf(response) <= budget) return { response, trimmed: [] };
  const headers = { ...response.headers };
  const fitted = () => headerBytesOf({ ...response, headers }) <= budget;
  const trimmed: string[] = [];
  if (headers.link !== undefined) {
    delete headers.link;
    trimmed.push('link');
  }
  const tagHeader = options.cacheTagHeader.toLowerCase();
  const tags = headers[tagHeader]?.split(',') ?? [];
  let cut = 0;
  while (!fitted() && tags.length > 1) {
    tags.splice(tags.length - 2, 1); // the last page tag; the key tag stays last
    headers[tagHeader] = tags.join(',');
    cut += 1;
  }
  if (cut > 0) {
    trimmed.push(`${tagHeader} (${cut} tags)`);
    const cacheControl = headers['cache-control'];
    if (cacheControl !== undefined) {
      headers['cache-control'] = capSharedMaxAge(cacheControl, options.sharedMaxAgeWithoutTags);
    }
  }
  const optional = Object.keys(headers)
    .filter((name) => !ESSENTIAL.has(name) && name !== tagHeader)
    .sort((a, b) => (headers[b]?.length ?? 0) - (headers[a]?.length ?? 0));
  for (const name of optional) {
    if (fitted()) break;
    delete headers[name];
    trimmed.push(name);
  }
  return { response: { ...response, headers }, trimmed };
}

/** `s-maxage` no longer than `seconds` (a page some of whose tags the CDN cannot purge by). */
function capSharedMaxAge(cacheControl: string, seconds: number): string {
  return cacheControl.replace(/s-maxage=(\d+)/, (whole, value: string) =>
    Number(value) > seconds ? `s-maxage=${seconds}` : whole,
  );
}
