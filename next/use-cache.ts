/**
 * `'use cache'` entries through Next 16's `cacheHandlers` (`get`, `set`, `refreshTags`,
 * `getExpiration`, `updateTags`), kept in the same per-process data cache as `fetch` and
 * `unstable_cache`, with the same shared tag check. `getExpiration` answers Infinity, which tells
 * Next to hand the soft tags to `get`, so one batched read checks an entry's own and soft tags.
 * `updateTags` only records this instance's revalidation: the `cacheHandler` sends it to the
 * service (Next calls both for every revalidateTag).
 */
import type { DataCache } from './data-cache.js';
import type { TagTimes } from './tag-times.js';

/** A `'use cache'` entry as Next hands it over and takes it back (`CacheEntry`). */
export interface UseCacheEntry {
  readonly value: ReadableStream<Uint8Array>;
  readonly tags: string[];
  readonly stale: number;
  readonly timestamp: number;
  readonly expire: number;
  readonly revalidate: number;
}

/** What is kept of an entry: its bytes, and the rest as Next gave it. */
export interface KeptUseCache {
  readonly meta: Omit<UseCacheEntry, 'value'>;
  readonly bytes: Uint8Array;
}

export interface UseCacheState {
  /** Shared with `fetch` entries: `use-cache:` keys hold `KeptUseCache` values only. */
  readonly cache: DataCache<unknown>;
  readonly tagTimes: TagTimes;
  readonly now: () => number;
}

const streamOf = (bytes: Uint8Array): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.slice());
      controller.close();
    },
  });

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    chunks.push(read.value);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/** The handler object Next registers for a `cacheHandlers` kind, over the process's state. */
export function createUseCacheHandler(state: () => UseCacheState) {
  const pendingSets = new Map<string, Promise<void>>();
  const keyOf = (cacheKey: string) => `use-cache:${cacheKey}`;
  return {
    /** The entry if it is within its revalidate time and no tag of it was revalidated since. */
    async get(cacheKey: string, softTags: string[]): Promise<UseCacheEntry | undefined> {
      const key = keyOf(cacheKey);
      await pendingSets.get(key);
      const { cache, now } = state();
      // As Next's own in-memory handler in production: past `revalidate`, an entry is a miss.
      const keptOf = (entry: { value: unknown }) => entry.value as KeptUseCache;
      const withinRevalidate = (entry: { value: unknown }) => {
        const { meta } = keptOf(entry);
        return now() <= meta.timestamp + meta.revalidate * 1000;
      };
      const entry = await cache.get(key, softTags, withinRevalidate);
      if (entry === undefined) return undefined;
      const { meta, bytes } = keptOf(entry);
      return { ...meta, value: streamOf(bytes) };
    },

    /**
     * Keeps the entry once its stream ends; a `get` of the key meanwhile waits for it. A stream
     * that fails keeps nothing (the next read renders again), and is not the caller's error.
     */
    async set(cacheKey: string, pendingEntry: Promise<UseCacheEntry>): Promise<void> {
      const key = keyOf(cacheKey);
      const stored = (async () => {
        const entry = await pendingEntry;
        // `expire: 0` is dynamic: Next regenerates it on every read, so it is never kept.
        if (entry.expire === 0) return;
        const { value, ...meta } = entry;
        const bytes = await bytesOf(value);
        state().cache.set(key, {
          value: { meta, bytes },
          tags: meta.tags,
          bytes: bytes.byteLength + key.length,
          madeAtMs: meta.timestamp,
        });
      })();
      const settled = stored.catch(() => undefined);
      pendingSets.set(key, settled);
      await settled;
      if (pendingSets.get(key) === settled) pendingSets.delete(key);
    },

    /** Nothing to refresh ahead: `get` reads the tag times it needs, in batches. */
    refreshTags(): Promise<void> {
      return Promise.resolve();
    },

    /** Infinity: Next passes the soft tags to `get`, which checks them with the entry's own. */
    getExpiration(_tags: string[]): Promise<number> {
      return Promise.resolve(Number.POSITIVE_INFINITY);
    },

    /** This instance's revalidation, known at once; the service learns it from the cacheHandler. */
    updateTags(tags: string[], _durations?: { expire?: number }): Promise<void> {
      const { tagTimes, now } = state();
      tagTimes.recordLocal(tags, now());
      return Promise.resolve();
    },
  };
}
