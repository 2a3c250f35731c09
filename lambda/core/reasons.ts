/**
 * The closed sets of reasons a refusal names: why a request names no cache entry, why an answer
 * is not stored, why a pass-through failed. Data only, so the rules that speak them (cache-key,
 * variants, key-rules, render-policy) and the errors that carry them (`errors.ts`) share one word.
 */
import { AnswerReason } from './traffic.js';

export const InvalidKeyReason = {
  InvalidPath: 'invalid-path',
  Traversal: 'traversal',
  EncodedSeparator: 'encoded-separator',
  EncodedDot: 'encoded-dot',
  Backslash: 'backslash',
  ControlCharacter: 'control-character',
  MalformedEncoding: 'malformed-encoding',
  DoubleEncoding: 'double-encoding',
  TooLong: 'too-long',
  InvalidTenant: 'invalid-tenant',
  MissingTenant: 'missing-tenant',
  /** A single-tenant service was asked for a tenant's page. */
  UnexpectedTenant: 'unexpected-tenant',
  UnknownTenant: 'unknown-tenant',
  /** Outside the configured allow-list of paths that may be rendered (a 404 at the edge). */
  PathNotRenderable: 'path-not-renderable',
  /** A variant header's value outside its configured bounds (`core/page/variants.ts`). */
  VariantOutOfBounds: 'variant-out-of-bounds',
  /** A key rule's query parameter missing, repeated or outside its bounds (`core/key-rules.ts`). */
  QueryOutOfBounds: 'query-out-of-bounds',
} as const;
export type InvalidKeyReason = (typeof InvalidKeyReason)[keyof typeof InvalidKeyReason];

/**
 * Why a rendered answer is not stored: the answer's own class (`AnswerReason`, traffic.ts), or
 * what the cache policy will not keep.
 */
export const RefusalReason = {
  ...AnswerReason,
  /** The body is over the configured limit. */
  TooLarge: 'too-large',
  /** The page sets a cookie and the policy refuses such pages. */
  SetCookie: 'set-cookie',
  /** The headers to keep with the page are over the size limit. */
  HeadersTooLarge: 'headers-too-large',
  /** A variant (an RSC prefetch) answered 404: never kept, its page's 404 is what is cached. */
  VariantNotFound: 'variant-not-found',
} as const;
export type RefusalReason = (typeof RefusalReason)[keyof typeof RefusalReason];

/** Why a pass-through failed, as the viewer is told: the status and the reason. */
export const PassFailure = {
  /** The request body is over `passBodyMaxBytes`. */
  BodyTooLarge: { status: 413, code: 'body-too-large' },
  /** No answer from the upstream within `passTimeoutMs`. */
  Timeout: { status: 504, code: 'pass-timeout' },
  /** The upstream could not be reached, or broke off before answering. */
  Unreachable: { status: 502, code: 'upstream-unreachable' },
  /** The upstream's answer is over what the origin function can return (6 MB). */
  AnswerTooLarge: { status: 502, code: 'pass-answer-too-large' },
} as const;
export type PassFailure = (typeof PassFailure)[keyof typeof PassFailure];
