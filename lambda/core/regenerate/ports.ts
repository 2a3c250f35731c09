/**
 * The ports only a regeneration needs: the renderer, and the render counter the demo renderer
 * shows. The ports every use case shares are in `core/page/ports.ts`.
 */
import type { CacheKey, RenderResult } from '../page/model.js';

/** What the renderer is asked for: only the cache key, so nothing outside it can change a page. */
export interface RenderRequest {
  readonly cacheKey: CacheKey;
  /** Aborted when the render must stop (timeout, lease lost). */
  readonly signal: AbortSignal;
}

/**
 * Produces a page. Implementations return any HTTP status they get, throw `RenderRetryableError`
 * for failures that may pass (network errors), and may throw `RenderRefusedError` early (a body
 * too large to read). Timeouts, lease loss and the cache policy are applied around every renderer.
 */
export interface Renderer {
  render(request: RenderRequest): Promise<RenderResult>;
}

/** Counts renders per cache entry (the demo renderer shows it on the page). */
export interface RenderCounter {
  increment(cacheKey: CacheKey): Promise<number>;
}
