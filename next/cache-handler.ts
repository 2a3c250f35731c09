/**
 * Next.js's `cacheHandler` (the ISR, route and data cache) for a site behind FaceTheory ISR.
 * Pages and route handlers always miss: the service in front is their cache, and every request
 * that reaches Next for one renders it fresh, which is what a regeneration needs. Data entries
 * (`fetch` cache, `unstable_cache`) are kept in this process and trusted while none of their
 * tags was revalidated since, on any instance (`data-state.ts`). `set()` hands a page's tags to
 * the service in the tag header of the answer. `revalidateTag` (behind the app's revalidateTag,
 * updateTag and revalidatePath) calls the service's revalidate endpoint. The class's static
 * methods are the `cacheHandlers` (`'use cache'`) handler, so one path serves both settings.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEFAULT_RETRY,
  sendRevalidation,
  type AdapterLog,
  type ClientDeps,
  type RetryPolicy,
} from './client.js';
import { loadAdapterConfig, tagHeaderOf } from './config.js';
import { hasNodeBuiltins } from './node-builtins.js';
import { revalidationBodiesOf, type Durations } from './revalidations.js';
import { sigV4Signer, type CredentialSource } from './sigv4.js';
import { pageTagsOf } from './tags.js';
import { createDataState, type FetchContext, type HandlerContext } from './data-state.js';
import { serviceTagTimesRead, type TagTimesRead } from './tag-times.js';
import { nextVersionCheck, type NextVersionContext } from './version.js';

/** The header Next puts a page's tags in, on the value it hands `set()`. */
const NEXT_CACHE_TAGS_HEADER = 'x-next-cache-tags';
const BUILD_PHASE = 'phase-production-build';

/** What the adapter is built from; each defaults to the real thing. Tests pass their own. */
export interface AdapterOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly fetch?: typeof fetch;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly now?: () => Date;
  readonly newKey?: () => string;
  readonly credentials?: CredentialSource;
  readonly log?: AdapterLog;
  readonly retry?: Partial<RetryPolicy>;
}

/** One line of JSON per event, like the service's own logs. */
const consoleLog: AdapterLog = (level, fields) => {
  const line = JSON.stringify({
    level: level.toUpperCase(),
    service: 'facetheory-isr/next',
    ...fields,
  });
  if (level === 'info') console.log(line);
  else console.error(line);
};

/** The parts of a cache value the adapter reads: pages and route handlers carry headers. */
export interface CacheValue {
  readonly kind?: string;
  headers?: Record<string, string | string[] | number | undefined>;
}

/**
 * Puts the page's tags in the answer's tag header. Next hands `set()` the very headers object
 * it then sends (pinned by test/next/adapter.test.ts), so the service learns Next's exact tags
 * from each render with no `headers()` rule to keep in step.
 */
function tagPage(value: CacheValue | null | undefined, tagHeader: string): void {
  const headers = value?.headers;
  const nextTags = headers?.[NEXT_CACHE_TAGS_HEADER];
  if (headers === undefined || typeof nextTags !== 'string') return;
  const own = typeof headers[tagHeader] === 'string' ? [headers[tagHeader]] : [];
  const tags = pageTagsOf([...own, nextTags].join(','));
  if (tags.length > 0) headers[tagHeader] = tags.join(',');
}

/** The adapter's state: module scope, since Next constructs a handler for every request. */
function createAdapter(options: AdapterOptions) {
  const env = options.env ?? process.env;
  const tagHeader = tagHeaderOf(env);
  let client: ClientDeps | undefined;
  const clientDeps = (): ClientDeps => {
    if (client !== undefined) return client;
    const config = loadAdapterConfig(env);
    client = {
      config,
      fetch: options.fetch ?? globalThis.fetch,
      sleep: options.sleep ?? ((ms) => sleep(ms)),
      random: options.random ?? Math.random,
      now: options.now ?? (() => new Date()),
      sign:
        config.auth.kind === 'sigv4'
          ? sigV4Signer(config.auth.region, options.credentials)
          : undefined,
      log: options.log ?? consoleLog,
      retry: { ...DEFAULT_RETRY, ...options.retry },
    };
    return client;
  };
  // Checked at once, so a bad setting fails the first request with its name, not a later
  // revalidation; `next build` renders through the handler but never revalidates, nor does
  // edge middleware (Next bundles the handler into it too).
  const building = env.NEXT_PHASE === BUILD_PHASE;
  if (!building && hasNodeBuiltins()) clientDeps();
  let read: TagTimesRead | undefined;
  const now = options.now ?? (() => new Date());
  const data = createDataState({
    now: () => now().getTime(),
    offline: building,
    read: () => (read ??= serviceTagTimesRead(clientDeps())),
    log: options.log ?? consoleLog,
  });
  return {
    tagHeader,
    data,
    async revalidate(tags: string | readonly string[], durations: Durations | undefined) {
      data.revalidated(typeof tags === 'string' ? [tags] : tags);
      const deps = clientDeps();
      const bodies = revalidationBodiesOf(tags, durations, deps.config.tenant);
      const key = `next-${(options.newKey ?? randomUUID)()}`;
      for (const [at, body] of bodies.entries()) {
        await sendRevalidation(deps, body, bodies.length === 1 ? key : `${key}.${at}`);
      }
    },
  };
}

/** A `cacheHandler` class over its own adapter state (the default export uses the process's). */
export function createCacheHandler(options: AdapterOptions = {}) {
  let adapter: ReturnType<typeof createAdapter> | undefined;
  const adapterOf = () => (adapter ??= createAdapter(options));
  const useCache = () => adapterOf().data.useCache;
  const checkNext = nextVersionCheck(options.log ?? consoleLog);

  return class FaceTheoryCacheHandler {
    constructor(context?: HandlerContext & NextVersionContext) {
      checkNext(context);
      adapterOf().data.onRequest(context);
    }

    /** A data entry still current on every instance; pages and route handlers always miss. */
    get(key: string, context?: FetchContext) {
      return adapterOf().data.get(key, context);
    }

    set(key: string, value: CacheValue | null, context?: FetchContext): Promise<void> {
      tagPage(value, adapterOf().tagHeader);
      adapterOf().data.set(key, value, context);
      return Promise.resolve();
    }

    /** The app's revalidateTag/updateTag/revalidatePath. @throws RevalidationFailedError */
    revalidateTag(tags: string | string[], durations?: Durations): Promise<void> {
      return adapterOf().revalidate(tags, durations);
    }

    resetRequestCache(): void {}

    // `cacheHandlers` (`'use cache'`, Next 16): Next registers the module's default export as
    // the handler object, so the same path serves `cacheHandler` and `cacheHandlers`.
    static get(...args: Parameters<ReturnType<typeof useCache>['get']>) {
      return useCache().get(...args);
    }

    static set(...args: Parameters<ReturnType<typeof useCache>['set']>) {
      return useCache().set(...args);
    }

    static refreshTags() {
      return useCache().refreshTags();
    }

    static getExpiration(tags: string[]) {
      return useCache().getExpiration(tags);
    }

    static updateTags(...args: Parameters<ReturnType<typeof useCache>['updateTags']>) {
      return useCache().updateTags(...args);
    }
  };
}
