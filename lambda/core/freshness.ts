/** The two numbers freshness depends on, as stored on META (epoch seconds). */
export interface Generation {
  readonly generatedAt: number;
  readonly revalidateSeconds: number;
}

/**
 * A generation is fresh while `now < generated_at + revalidate_seconds`. DynamoDB TTL never
 * decides this: it deletes rows up to days late.
 */
export const isFresh = (generation: Generation, nowSeconds: number): boolean =>
  nowSeconds < generation.generatedAt + generation.revalidateSeconds;

/** Seconds of freshness left (0 once stale): what a shared cache may keep the page for. */
export const secondsUntilStale = (generation: Generation, nowSeconds: number): number =>
  Math.max(0, generation.generatedAt + generation.revalidateSeconds - nowSeconds);

/** A lease is held iff `lease_expires_at > now`, on the caller's clock. */
export const isLeaseLive = (lease: { readonly expiresAt: number }, nowSeconds: number): boolean =>
  lease.expiresAt > nowSeconds;
