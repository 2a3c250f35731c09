import type { CacheKey } from '../../core/page/model.js';
import type { RenderCounter } from '../../core/regenerate/ports.js';

/** The demo's render counter in memory: one count per cache entry, as the DynamoDB row keeps. */
export class InMemoryRenderCounter implements RenderCounter {
  readonly #counts = new Map<string, number>();

  increment(cacheKey: CacheKey): Promise<number> {
    const count = (this.#counts.get(cacheKey.pk) ?? 0) + 1;
    this.#counts.set(cacheKey.pk, count);
    return Promise.resolve(count);
  }
}
