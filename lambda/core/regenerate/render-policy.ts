/**
 * What a rendered page means for the cache, in one place, for every renderer:
 * - 408/425/429 and 5xx are retryable: the last good page stays live;
 * - anything else is classed by `classifyAnswer` (traffic.ts): stored, or not stored (pass, or
 *   static for an immutable asset), whatever its status;
 * - a page that would be stored is still not, if its body or kept headers are over their limits
 *   or it sets a cookie under `setCookie: 'refuse'`.
 * An answer not stored is a `RenderRefusedError` carrying its class and reason: the viewer gets
 * a pass-through of their own request, and the key is remembered as pass (`regenerate`).
 * What is kept of a stored page: its body, the allow-listed headers (`response-headers.ts`),
 * never a `Set-Cookie`: a cookie is per viewer, so it is stripped (logged) or, if so configured,
 * the page is not stored. CloudFront does the same when cookies are not in the cache key.
 */
import { pageTags } from '../page/cache-tags.js';
import { RefusalReason, RenderRefusedError, RenderRetryableError } from '../errors.js';
import type { RenderResult } from '../page/model.js';
import {
  classifyAnswer,
  DEFAULT_CACHEABLE_CONTENT_TYPES,
  isStorableStatus,
  type AnswerPolicy,
} from '../traffic.js';
import { TrafficClass } from '../traffic-rules.js';
import {
  DEFAULT_HEADER_POLICY,
  keptHeaders,
  SetCookiePolicy,
  type HeaderPolicy,
} from '../response-headers.js';

export interface RenderPolicy {
  /** Largest body published. */
  readonly maxBodyBytes: number;
  /** Freshness of a page that asks for none (no `revalidateSeconds`, no `s-maxage`/`max-age`). */
  readonly defaultRevalidateSeconds: number;
  /** @default DEFAULT_HEADER_POLICY */
  readonly headerPolicy?: HeaderPolicy | undefined;
  /** @default 'strip' */
  readonly setCookie?: SetCookiePolicy | undefined;
  /** What an answer without freshness may be cached by heuristic. @default ['text/html'] */
  readonly answerPolicy?: AnswerPolicy | undefined;
}

/** A page the policy admits, with the freshness and headers it will be published with. */
export interface AdmittedPage extends RenderResult {
  readonly revalidateSeconds: number;
  /** The allow-listed upstream headers, stored with the generation. */
  readonly keptHeaders: Readonly<Record<string, string>> | undefined;
  /** Names of the cookies the page tried to set, which were dropped (for the log). */
  readonly strippedCookies: readonly string[];
  /** Valid tags, lower-cased (`core/page/cache-tags.ts`). */
  readonly tags: readonly string[];
  /** Tags CloudFront could not use, or past the 49th (for the log). */
  readonly droppedTags: readonly string[];
}

const TRANSIENT = new Set([408, 425, 429]);
const MAX_REVALIDATE_SECONDS = 365 * 24 * 3600;
export const DEFAULT_ANSWER_POLICY: AnswerPolicy = {
  cacheableContentTypes: DEFAULT_CACHEABLE_CONTENT_TYPES,
};

/** Whether a status is published, retried or not stored (before any header is read). */
export function statusDisposition(status: number): 'publish' | 'retry' | 'refuse' {
  if (isStorableStatus(status)) return 'publish';
  if (status >= 500 || TRANSIENT.has(status)) return 'retry';
  return 'refuse';
}

/**
 * @returns the page to publish, with its freshness resolved.
 * @throws RenderRetryableError for a status worth retrying; RenderRefusedError for an answer
 * that must not be stored (its class, its reason: status, Cache-Control, size, cookies).
 */
export function admitPage(page: RenderResult, policy: RenderPolicy): AdmittedPage {
  if (statusDisposition(page.status) === 'retry') {
    throw new RenderRetryableError(`renderer answered ${page.status}`, page.status);
  }
  const decision = classifyAnswer(
    {
      status: page.status,
      headers: page.headers,
      contentType: page.contentType,
      location: page.location,
      bodyBytes: page.body.byteLength,
      revalidateSeconds: page.revalidateSeconds,
    },
    policy.answerPolicy ?? DEFAULT_ANSWER_POLICY,
  );
  if (decision.class !== TrafficClass.Cached) {
    const cacheControl = page.headers?.['cache-control'];
    throw new RenderRefusedError(
      decision.reason,
      `the answer is not stored (${decision.reason}; status ${page.status}` +
        `${cacheControl === undefined ? '' : `, Cache-Control: ${cacheControl}`})`,
      page.status,
      { trafficClass: decision.class },
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
    page.revalidateSeconds ?? decision.freshnessSeconds ?? policy.defaultRevalidateSeconds;
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
