/**
 * What a rendered page means for the cache, in one place, for every renderer:
 * - 2xx, 301/302/303/307/308 (the `Location` is kept) and 404/410 are published, unless the
 *   page says it must not be stored (`Cache-Control: private` or `no-store`, whatever its
 *   status: a 302 to /login marked private is per-viewer) or its body is over the limit;
 * - 408/425/429 and 5xx are retryable: the last good page stays live;
 * - anything else (other 4xx, 1xx, 304...) is refused for good.
 * A refusal is terminal (`RenderRefusedError`); a retryable answer is `RenderRetryableError`.
 * What is kept of the page: its body, the allow-listed headers (`response-headers.ts`), never a
 * `Set-Cookie`: a cookie is per viewer, so it is stripped (logged) or, if so configured, the page
 * is refused as uncacheable. CloudFront does the same when cookies are not in the cache key.
 */
import { pageTags } from './cache-tags.js';
import { RefusalReason, RenderRefusedError, RenderRetryableError } from './errors.js';
import type { RenderResult } from './ports.js';
import {
  DEFAULT_HEADER_POLICY,
  keptHeaders,
  SetCookiePolicy,
  type HeaderPolicy,
} from './response-headers.js';

export interface RenderPolicy {
  /** Largest body published. */
  readonly maxBodyBytes: number;
  /** Freshness of a page that asks for none (no `revalidateSeconds`, no `s-maxage`/`max-age`). */
  readonly defaultRevalidateSeconds: number;
  /** @default DEFAULT_HEADER_POLICY */
  readonly headerPolicy?: HeaderPolicy | undefined;
  /** @default 'strip' */
  readonly setCookie?: SetCookiePolicy | undefined;
}

/** A page the policy admits, with the freshness and headers it will be published with. */
export interface AdmittedPage extends RenderResult {
  readonly revalidateSeconds: number;
  /** The allow-listed upstream headers, stored with the generation. */
  readonly keptHeaders: Readonly<Record<string, string>> | undefined;
  /** Names of the cookies the page tried to set, which were dropped (for the log). */
  readonly strippedCookies: readonly string[];
  /** Valid tags, lower-cased (`core/cache-tags.ts`). */
  readonly tags: readonly string[];
  /** Tags CloudFront could not use, or past the 49th (for the log). */
  readonly droppedTags: readonly string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const GONE = new Set([404, 410]);
const TRANSIENT = new Set([408, 425, 429]);
const MAX_REVALIDATE_SECONDS = 365 * 24 * 3600;
const UNCACHEABLE = /(?:^|[\s,])(?:no-store|private)(?:$|[\s,=])/i;

/** Whether a status is published, retried or refused (before any header or size check). */
export function statusDisposition(status: number): 'publish' | 'retry' | 'refuse' {
  if ((status >= 200 && status < 300) || REDIRECTS.has(status) || GONE.has(status)) {
    return 'publish';
  }
  if (status >= 500 || TRANSIENT.has(status)) return 'retry';
  return 'refuse';
}

/**
 * @returns the page to publish, with its freshness resolved.
 * @throws RenderRetryableError for a status worth retrying; RenderRefusedError for a page that
 * must never be cached (status, `private`/`no-store`, size).
 */
export function admitPage(page: RenderResult, policy: RenderPolicy): AdmittedPage {
  const disposition = statusDisposition(page.status);
  if (disposition === 'retry') {
    throw new RenderRetryableError(`renderer answered ${page.status}`, page.status);
  }
  if (disposition === 'refuse') {
    throw new RenderRefusedError(
      RefusalReason.Status,
      `renderer answered ${page.status}, which is never cached`,
      page.status,
    );
  }
  const cacheControl = page.headers?.['cache-control'] ?? '';
  if (UNCACHEABLE.test(cacheControl)) {
    throw new RenderRefusedError(
      RefusalReason.Uncacheable,
      `the page is marked uncacheable (Cache-Control: ${cacheControl})`,
      page.status,
    );
  }
  if (page.body.byteLength > policy.maxBodyBytes) {
    throw new RenderRefusedError(
      RefusalReason.TooLarge,
      `body of ${page.body.byteLength} bytes is over the ${policy.maxBodyBytes}-byte limit`,
      page.status,
    );
  }
  const cookies = page.setCookies ?? [];
  if (cookies.length > 0 && policy.setCookie === SetCookiePolicy.Refuse) {
    throw new RenderRefusedError(
      RefusalReason.SetCookie,
      `the page sets cookies (${cookieNames(cookies).join(', ')}), which are per viewer`,
      page.status,
    );
  }
  const asked =
    page.revalidateSeconds ?? sharedMaxAge(cacheControl) ?? policy.defaultRevalidateSeconds;
  const revalidateSeconds = Math.min(Math.max(1, Math.floor(asked)), MAX_REVALIDATE_SECONDS);
  const tags = pageTags(page.tags);
  return {
    ...page,
    setCookies: undefined,
    revalidateSeconds,
    keptHeaders: keptHeaders(page.headers, policy.headerPolicy ?? DEFAULT_HEADER_POLICY),
    strippedCookies: cookieNames(cookies),
    tags: tags.kept,
    droppedTags: tags.dropped,
  };
}

/** Cookie names only: values are secrets of one viewer and never logged. */
const cookieNames = (cookies: readonly string[]): string[] =>
  cookies.map((cookie) => cookie.split('=', 1)[0]?.trim() ?? '');

/** `s-maxage`, else `max-age`, from a Cache-Control header: the freshness the page asks for. */
export function sharedMaxAge(cacheControl: string): number | undefined {
  const directive = (name: string) =>
    new RegExp(`(?:^|,)\\s*${name}\\s*=\\s*"?(\\d+)"?`, 'i').exec(cacheControl)?.[1];
  const value = directive('s-maxage') ?? directive('max-age');
  return value === undefined ? undefined : Number(value);
}
