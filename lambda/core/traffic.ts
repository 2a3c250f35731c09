/**
 * Which class an upstream answer belongs to, in one place (the request side is
 * `traffic-rules.ts`): `cached` (stored, served by ISR), `pass` (given to the viewer who asked,
 * never stored) or `static` (immutable: the viewer gets the upstream's own Cache-Control, and
 * CloudFront keeps it, never the table). RFC 9111 §3 and §4.2.2, read for a shared cache that
 * renders without the viewer's cookies. Pure: bundled into the origin and the worker.
 */
import { TrafficClass } from './traffic-rules.js';

/** Why an answer is not stored: logged, counted, and named in `Cache-Status` (`detail=`). */
export const AnswerReason = {
  /** `private`, `no-store` or `no-cache`: per viewer, or never to be reused as is. */
  Uncacheable: 'uncacheable',
  /** `immutable`: an asset; CloudFront keeps it with the upstream's own Cache-Control. */
  Immutable: 'immutable',
  /** No freshness stated, and not heuristically cacheable (a JSON API, a 302 or 307). */
  NoFreshness: 'no-freshness',
  /** A status the cache never stores (401, 403, 405, 1xx, 304...). */
  Status: 'status',
  /** `Vary` names what only the viewer's request holds (`*`, `Cookie`, `Authorization`). */
  Vary: 'vary',
  /** A redirect to the very page it answers for (its `Location` has the same cache key). */
  SelfRedirect: 'self-redirect',
} as const;
export type AnswerReason = (typeof AnswerReason)[keyof typeof AnswerReason];

/** What the classification reads of an answer: the upstream's status and headers. */
export interface Answer {
  readonly status: number;
  /** Lower-case names. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly contentType?: string | undefined;
  readonly location?: string | undefined;
  readonly bodyBytes: number;
  /** Freshness an in-process renderer states itself (`RenderResult.revalidateSeconds`). */
  readonly revalidateSeconds?: number | undefined;
}

export interface AnswerPolicy {
  /**
   * Media types an answer without any freshness may be cached by heuristic (RFC 9111 §4.2.2),
   * lower-case; `text/*` matches a whole family. @default ['text/html']
   */
  readonly cacheableContentTypes: readonly string[];
  /**
   * Whether a redirect's `Location` names the very cache entry it answers for (the key drops
   * what the target changes): such a redirect would loop once cached.
   * @default - no redirect is taken for its own page
   */
  readonly isOwnKey?: ((location: string) => boolean) | undefined;
}

export const DEFAULT_CACHEABLE_CONTENT_TYPES: readonly string[] = ['text/html'];

export type AnswerDecision =
  | {
      readonly class: typeof TrafficClass.Cached;
      /** Shared freshness the answer states; undefined: the configured default applies. */
      readonly freshnessSeconds: number | undefined;
    }
  | { readonly class: typeof TrafficClass.Pass; readonly reason: AnswerReason }
  | { readonly class: typeof TrafficClass.Static; readonly reason: typeof AnswerReason.Immutable };

/** Statuses the cache stores when the answer says how long (2xx, redirects, 404, 410). */
const STORABLE = new Set([301, 302, 303, 307, 308, 404, 410]);
/** Statuses cacheable by heuristic (RFC 9111 §4.2.2, "heuristically cacheable"). */
const HEURISTIC = new Set([200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]);
/** `Vary` values only the viewer's own request can answer. */
const VARY_PASS = new Set(['*', 'cookie', 'authorization']);

/** Whether a status is one the cache may store at all (before any header is read). */
export const isStorableStatus = (status: number): boolean =>
  (status >= 200 && status < 300) || STORABLE.has(status);

/**
 * The class of an answer a render got (never a retryable one: 5xx and 408/425/429 are decided
 * before). In order: `private`/`no-store`/`no-cache` and a `Vary` on the viewer → pass;
 * `immutable` → static; a status never stored, or a redirect to its own key → pass; then stored if the answer states a
 * freshness (`s-maxage`, `max-age` > 0, `public`, an `Expires` ahead) or is heuristically
 * cacheable: a heuristic status, and a body-less redirect or a listed content type.
 * `max-age=0` and a past `Expires` speak to browsers: they neither make an answer cacheable nor
 * set its shared freshness.
 */
export function classifyAnswer(answer: Answer, policy: AnswerPolicy): AnswerDecision {
  const directives = cacheDirectives(answer.headers?.['cache-control']);
  if (['private', 'no-store', 'no-cache'].some((name) => directives.has(name))) {
    return { class: TrafficClass.Pass, reason: AnswerReason.Uncacheable };
  }
  if (variesOnViewer(answer.headers?.vary)) {
    return { class: TrafficClass.Pass, reason: AnswerReason.Vary };
  }
  if (directives.has('immutable')) {
    return { class: TrafficClass.Static, reason: AnswerReason.Immutable };
  }
  if (!isStorableStatus(answer.status)) {
    return { class: TrafficClass.Pass, reason: AnswerReason.Status };
  }
  if (isRedirect(answer) && policy.isOwnKey?.(answer.location ?? '') === true) {
    return { class: TrafficClass.Pass, reason: AnswerReason.SelfRedirect };
  }
  const freshness = statedFreshness(directives, answer.headers);
  if (
    freshness !== undefined ||
    directives.has('public') ||
    answer.revalidateSeconds !== undefined
  ) {
    return { class: TrafficClass.Cached, freshnessSeconds: freshness };
  }
  if (HEURISTIC.has(answer.status) && (isBodylessRedirect(answer) || listed(answer, policy))) {
    return { class: TrafficClass.Cached, freshnessSeconds: undefined };
  }
  return { class: TrafficClass.Pass, reason: AnswerReason.NoFreshness };
}

/** Directive names (lower-case) to their values (`''` when none), quotes removed. */
export function cacheDirectives(cacheControl: string | undefined): Map<string, string> {
  const directives = new Map<string, string>();
  for (const part of (cacheControl ?? '').match(/(?:[^,"]|"[^"]*")+/g) ?? []) {
    const at = part.indexOf('=');
    const name = (at < 0 ? part : part.slice(0, at)).trim().toLowerCase();
    if (name === '') continue;
    const value =
      at < 0
        ? ''
        : part
            .slice(at + 1)
            .trim()
            .replace(/^"|"$/g, '');
    if (!directives.has(name)) directives.set(name, value);
  }
  return directives;
}

/**
 * The shared freshness an answer states, in seconds: `s-maxage`, else a positive `max-age`,
 * else an `Expires` ahead of `Date`; undefined when it states none (the default then applies).
 */
function statedFreshness(
  directives: Map<string, string>,
  headers: Readonly<Record<string, string>> | undefined,
): number | undefined {
  const seconds = (name: string) => {
    const value = directives.get(name);
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
  };
  const shared = seconds('s-maxage');
  if (shared !== undefined) return shared;
  const maxAge = seconds('max-age');
  if (maxAge !== undefined) return maxAge > 0 ? maxAge : undefined;
  // Expires counts against the answer's own Date (RFC 9111 §4.2.1); without one, it is not read.
  const expires = Date.parse(headers?.expires ?? '');
  const date = Date.parse(headers?.date ?? '');
  if (Number.isNaN(expires) || Number.isNaN(date)) return undefined;
  const left = Math.floor((expires - date) / 1000);
  return left > 0 ? left : undefined;
}

const variesOnViewer = (vary: string | undefined): boolean =>
  (vary ?? '').split(',').some((name) => VARY_PASS.has(name.trim().toLowerCase()));

const isRedirect = (answer: Answer): boolean =>
  answer.status >= 300 && answer.status < 400 && answer.location !== undefined;

const isBodylessRedirect = (answer: Answer): boolean =>
  isRedirect(answer) && answer.bodyBytes === 0;

/** Whether the answer's media type is on the list (`text/*` matches its family). */
function listed(answer: Answer, policy: AnswerPolicy): boolean {
  const type = (answer.contentType ?? answer.headers?.['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (!type) return false;
  return policy.cacheableContentTypes.some((entry) =>
    entry.endsWith('/*') ? type.startsWith(entry.slice(0, -1)) : entry === type,
  );
}
