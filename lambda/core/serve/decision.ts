/**
 * What serving decided for a request, as the origin logs it (`decision`) and counts it: one
 * closed set (Varnish's `cache_req_fsm.c` keeps one table of request states), so the handler
 * branches on names, never on strings it spells itself.
 */
import type { InvalidKeyReason } from '../errors.js';
import type { RegenerateOutcome } from '../page/regeneration.js';

export const ServeDecision = {
  /** Served from the cache: fresh (HIT or held), stale while one regeneration is queued, 304. */
  Fresh: 'fresh',
  Stale: 'stale',
  NotModified: 'not-modified',
  /** A MISS rendered and published in the request. */
  New: 'new',
  /** A key remembered as pass (hit-for-pass), sent to the upstream as it is. */
  HitForPass: 'pass:hit-for-pass',
  /** 503s: every render slot taken, a render that failed, a store unavailable. */
  Overloaded: 'overloaded',
  RenderFailed: 'render-failed',
  Unavailable: 'unavailable',
  /** Refused with no upstream to pass to: not GET or HEAD (405), past the variant limit (503). */
  MethodNotAllowed: 'method-not-allowed',
  VariantLimit: 'variant-limit',
} as const;

/**
 * What serving decided: a name of `ServeDecision`; a MISS another holder answered, or why none
 * did (503), by the regeneration's own outcome (`held`, `lease-held`...); a request naming no
 * page, by its reason (400, 404); a pass-through, and why (`pass:` and RFC 9211's detail); or a
 * page that could not be cached (502), by its refusal (`refused:` and the reason).
 */
export type ServeDecision =
  | (typeof ServeDecision)[keyof typeof ServeDecision]
  | RegenerateOutcome['decision']
  | InvalidKeyReason
  | `pass:${string}`
  | `refused:${string}`;
