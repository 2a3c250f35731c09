/**
 * When a published generation answers a request or an intent, in one place. Times are epoch
 * seconds on the caller's clock. DynamoDB TTL never decides any of this: it deletes rows up to
 * days late.
 */
/** The numbers freshness depends on, as stored on META (epoch seconds). */
export interface Generation {
  readonly generatedAt: number;
  readonly revalidateSeconds: number;
  /** An operator's hold (`hold_until`): served as is, never regenerated, until then. */
  readonly holdUntil?: number | undefined;
}

/**
 * A generation is fresh while `now < generated_at + revalidate_seconds`. A revalidation's stale
 * mark (`revalidate_seconds = 0`; a published page has at least 1) is stale on every clock, even
 * one behind the clock that rendered the page (its `generated_at` still ahead of `now`).
 */
export const isFresh = (generation: Generation, nowSeconds: number): boolean =>
  generation.revalidateSeconds > 0 &&
  nowSeconds < generation.generatedAt + generation.revalidateSeconds;

/** A held page is served as is and not regenerated, stale or not, until `hold_until`. */
export const isHeld = (generation: Generation | undefined, nowSeconds: number): boolean =>
  generation?.holdUntil !== undefined && nowSeconds < generation.holdUntil;

/** What a viewer is served without a regeneration being queued: a fresh page, or a held one. */
export const needsNoRegeneration = (generation: Generation, nowSeconds: number): boolean =>
  isFresh(generation, nowSeconds) || isHeld(generation, nowSeconds);

/** What the skip rule reads of a published generation (a META row). */
export interface PublishedGeneration extends Generation {
  readonly s3Key: string;
}

/**
 * Seconds until the page may be regenerated (0 once stale): what a shared cache may keep it for.
 * A hold extends it to the hold's end (lifting a hold purges the CDN).
 */
export const secondsUntilStale = (generation: Generation, nowSeconds: number): number =>
  Math.max(
    0,
    generation.generatedAt + generation.revalidateSeconds - nowSeconds,
    isHeld(generation, nowSeconds) ? (generation.holdUntil ?? 0) - nowSeconds : 0,
  );

/**
 * What a regeneration is for, as data, so the rule that it is already answered lives here:
 * - `intent`: a queued regeneration intent. `observedGeneratedAt` is the stale generation the
 *   origin served (absent for a forced regeneration).
 * - `page`: a page a viewer is waiting for (an origin MISS). `brokenBodyKey` is the body of a
 *   META found pointing at a missing object: only another generation answers then.
 */
export type Need =
  | { readonly kind: 'intent'; readonly observedGeneratedAt?: number | undefined }
  | { readonly kind: 'page'; readonly brokenBodyKey?: string | undefined };

/**
 * Whether `meta` (read once the lease is held, or while waiting for another holder) already
 * answers `need`, so no render is needed:
 * - an intent is answered by a fresh generation, or by one newer than the stale generation it
 *   saw (whoever published it);
 * - a waiting viewer is answered by any published generation other than a broken one.
 */
export function isAnswered(
  meta: PublishedGeneration | undefined,
  nowSeconds: number,
  need: Need,
): boolean {
  if (meta === undefined) return false;
  if (need.kind === 'page') return meta.s3Key !== need.brokenBodyKey;
  return (
    isFresh(meta, nowSeconds) ||
    (need.observedGeneratedAt !== undefined && meta.generatedAt > need.observedGeneratedAt)
  );
}
