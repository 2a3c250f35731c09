/**
 * The data cache of one Next process as the handlers use it: `fetch`/`unstable_cache` entries
 * (kind FETCH) through the `cacheHandler`, `'use cache'` entries through `cacheHandlers`, both in
 * one byte-bounded store (`cacheMaxMemorySize`, 50 MB by default; 0 keeps nothing) and checked
 * against the shared tag times. A request from the service's renderer (`x-isr-regeneration`,
 * which the edge strips from viewers) makes every later check read afresh: a regeneration never
 * trusts a read that started before it, even one the revalidation that queued it did not outwait.
 */
import type { AdapterLog } from './client.js';
import { DataCache, DEFAULT_MAX_BYTES } from './data-cache.js';
import { TagTimes, type TagTimesRead } from './tag-times.js';
import { createUseCacheHandler } from './use-cache.js';

/** The header `lambda/adapters/renderer/http.ts` puts on every render the service asks for. */
export const REGENERATION_HEADER = 'x-isr-regeneration';

/** What Next hands a `cacheHandler`'s constructor, as far as the data cache reads it. */
export interface HandlerContext {
  readonly maxMemoryCacheSize?: number;
  readonly _requestHeaders?: Readonly<Record<string, string | string[] | undefined>>;
}

/** A FETCH entry's value as Next stores it (`revalidate` in seconds, or false: never by age). */
export interface FetchValue {
  readonly kind: 'FETCH';
  readonly revalidate?: number | false;
  readonly tags?: readonly string[];
}

/** What Next hands `get`/`set` beside the key, for FETCH entries. */
export interface FetchContext {
  readonly kind?: string;
  readonly fetchCache?: boolean;
  readonly revalidate?: number | false;
  readonly tags?: readonly string[];
  readonly softTags?: readonly string[];
}

export interface DataStateOptions {
  readonly now: () => number;
  /** `next build`: no service to ask; entries live for the build only. */
  readonly offline: boolean;
  /** The signed read of the service's tag times (built on first use). */
  readonly read: () => TagTimesRead;
  readonly log: AdapterLog;
}

const isFetch = (context: FetchContext | undefined): boolean =>
  context?.kind === 'FETCH' || context?.fetchCache === true;

export function createDataState(options: DataStateOptions) {
  const { now } = options;
  const tagTimes = new TagTimes({
    now,
    offline: options.offline,
    read: (tags) => options.read()(tags),
    onReadError: (error) =>
      options.log('warn', {
        message: 'tag times unreadable: data cache entries treated as stale',
        reason: error instanceof Error ? error.message : String(error),
      }),
  });
  let cache: DataCache<unknown> | undefined;
  const cacheOf = (maxBytes = DEFAULT_MAX_BYTES) =>
    (cache ??= new DataCache<unknown>(maxBytes, tagTimes, now));

  return {
    tagTimes,
    cacheOf,

    /** Every request's handler: the store's size, and a regeneration's fresh reads. */
    onRequest(context: HandlerContext | undefined): void {
      cacheOf(context?.maxMemoryCacheSize ?? DEFAULT_MAX_BYTES);
      if (context?._requestHeaders?.[REGENERATION_HEADER] !== undefined) {
        tagTimes.requireFreshReads();
      }
    },

    /** A FETCH entry that is still current, as Next reads it; anything else misses. */
    async get(key: string, context: FetchContext | undefined) {
      if (!isFetch(context)) return null;
      const store = cacheOf();
      const entry = await store.get(key, [...(context?.tags ?? []), ...(context?.softTags ?? [])]);
      if (entry === undefined) return null;
      const value = entry.value as FetchValue;
      const revalidate = context?.revalidate || value.revalidate;
      // Past its own time Next serves it once more and fetches again in the background.
      if (typeof revalidate === 'number' && now() - entry.madeAtMs > revalidate * 1000) {
        store.noteMiss(key);
      }
      return { lastModified: entry.madeAtMs, value };
    },

    /** Keeps a FETCH entry (pages and route handlers are the service's to keep). */
    set(key: string, value: unknown, context: FetchContext | undefined): void {
      if (!isFetch(context) || (value as FetchValue | null)?.kind !== 'FETCH') return;
      const tags = context?.tags ?? (value as FetchValue).tags ?? [];
      cacheOf().set(key, { value, tags, bytes: JSON.stringify(value).length + key.length });
    },

    /** This instance's revalidation of `tags`, known here at once. */
    revalidated(tags: readonly string[]): void {
      tagTimes.recordLocal(tags, now());
    },

    useCache: createUseCacheHandler(() => ({ cache: cacheOf(), tagTimes, now })),
  };
}

export type DataState = ReturnType<typeof createDataState>;
