import { describe, expect, it } from '@jest/globals';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import {
  isPrivilegedHeader,
  PRIVILEGED_HEADER_PREFIXES,
  PRIVILEGED_HEADERS,
} from '../../lambda/core/traffic-rules.js';
import { ByteLru, DataCache, MAX_ENTRY_BYTES } from '../../next/data-cache.js';
import { createDataState, REGENERATION_HEADER } from '../../next/data-state.js';
import { TagTimes, type ServiceTagTimes } from '../../next/tag-times.js';
import type { UseCacheEntry } from '../../next/use-cache.js';

/** A data state over a fake service whose record the test writes, on a clock the test moves. */
function setup(options: { maxBytes?: number } = {}) {
  let now = 1_000_000;
  const times = new Map<string, number>();
  let reads = 0;
  const read = () => (tags: readonly string[]) => {
    reads += 1;
    const answer: ServiceTagTimes = {
      revalidated_at_ms: Object.fromEntries(
        tags.flatMap((t) => (times.has(t) ? [[t, times.get(t)]] : [])),
      ),
      cache_ms: 250,
      skew_margin_ms: 2_000,
      kept_ms: 7 * 86_400_000,
    };
    return Promise.resolve(answer);
  };
  const data = createDataState({ now: () => now, offline: false, read, log: () => undefined });
  data.onRequest({ maxMemoryCacheSize: options.maxBytes ?? 50_000_000 });
  return {
    data,
    times,
    reads: () => reads,
    now: () => now,
    advance: (ms: number) => (now += ms),
  };
}

const FETCH = (body: string, revalidate: number | false = false) => ({
  kind: 'FETCH' as const,
  data: { headers: {}, body, status: 200, url: 'https://cms.example/posts' },
  revalidate,
});
const fetchCtx = { kind: 'FETCH', fetchCache: true, tags: ['posts'] };
const getCtx = { kind: 'FETCH', tags: ['posts'], softTags: ['_N_T_/isr'] };

describe('the data cache: fetch and unstable_cache entries (kind FETCH)', () => {
  it('keeps an entry and hands it back as Next reads it, stamped with the miss before it', async () => {
    const s = setup();
    expect(await s.data.get('k', getCtx)).toBeNull();
    const missedAt = s.now();
    s.advance(40); // the fetch
    s.data.set('k', FETCH('v1'), fetchCtx);
    s.advance(10);
    expect(await s.data.get('k', getCtx)).toEqual({ lastModified: missedAt, value: FETCH('v1') });
  });

  it("misses once any of its tags, or the reader's soft tags, was revalidated since", async () => {
    const s = setup();
    s.data.set('k', FETCH('v1'), fetchCtx);
    s.data.set('j', FETCH('v2'), fetchCtx);
    s.advance(5_000);
    s.times.set('_n_t_/isr', s.now());
    s.advance(300);
    expect(await s.data.get('k', getCtx)).toBeNull();
    // The same entry read from another page (other soft tags) was current until the miss above.
    expect(
      await s.data.get('j', { kind: 'FETCH', tags: ['posts'], softTags: ['_N_T_/x'] }),
    ).not.toBeNull();
  });

  it('stamps an entry fetched during a revalidation with its miss, so it is stale', async () => {
    const s = setup();
    expect(await s.data.get('k', getCtx)).toBeNull(); // the miss
    s.advance(3_000);
    s.times.set('posts', s.now()); // revalidated while the data was being fetched
    s.advance(3_000);
    s.data.set('k', FETCH('old data'), fetchCtx);
    s.advance(300);
    expect(await s.data.get('k', getCtx)).toBeNull();
  });

  it('keeps nothing for pages and route handlers: the service is their cache', async () => {
    const s = setup();
    const page = { kind: 'APP_PAGE', html: '<p>', headers: {} };
    s.data.set('/isr', page, { kind: 'APP_PAGE' });
    expect(await s.data.get('/isr', { kind: 'APP_PAGE' })).toBeNull();
    expect(await s.data.get('/feed.json', { kind: 'APP_ROUTE' })).toBeNull();
    expect(s.data.cacheOf().bytes).toBe(0);
  });

  it('keeps nothing with cacheMaxMemorySize 0, and drops the least recently used past the bound', async () => {
    const none = setup({ maxBytes: 0 });
    none.data.set('k', FETCH('v'), fetchCtx);
    expect(await none.data.get('k', getCtx)).toBeNull();
    const lru = new ByteLru<string>(10);
    lru.set('a', { value: 'a', madeAtMs: 0, tags: [], bytes: 4 });
    lru.set('b', { value: 'b', madeAtMs: 0, tags: [], bytes: 4 });
    lru.get('a');
    lru.set('c', { value: 'c', madeAtMs: 0, tags: [], bytes: 4 });
    expect([lru.get('a')?.value, lru.get('b'), lru.get('c')?.value]).toEqual(['a', undefined, 'c']);
    expect(lru.bytes).toBe(8);
    lru.set('huge', { value: 'h', madeAtMs: 0, tags: [], bytes: MAX_ENTRY_BYTES + 1 });
    expect(lru.get('huge')).toBeUndefined();
  });

  it("a render the service asks for reads tag times afresh (its header); a viewer's request reuses them", async () => {
    const s = setup();
    s.data.set('k', FETCH('v1'), fetchCtx);
    s.advance(10);
    await s.data.get('k', getCtx);
    expect(s.reads()).toBe(1);
    s.data.onRequest({ _requestHeaders: { host: 'x' } });
    await s.data.get('k', getCtx);
    expect(s.reads()).toBe(1);
    s.data.onRequest({ _requestHeaders: { [REGENERATION_HEADER]: '1' } });
    await s.data.get('k', getCtx);
    expect(s.reads()).toBe(2);
  });

  it("this instance's revalidateTag makes its entries stale at once", async () => {
    const s = setup();
    s.data.set('k', FETCH('v1'), fetchCtx);
    s.advance(10);
    s.data.revalidated(['posts']);
    expect(await s.data.get('k', getCtx)).toBeNull();
  });
});

const streamOf = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
const textOf = async (entry: UseCacheEntry | undefined) =>
  entry === undefined ? undefined : new Response(entry.value).text();
const useCacheEntry = (text: string, timestamp: number, more: Partial<UseCacheEntry> = {}) => ({
  value: streamOf(text),
  tags: ['posts'],
  stale: 300,
  timestamp,
  expire: 31_536_000,
  revalidate: 900,
  ...more,
});

describe("the data cache: 'use cache' entries (cacheHandlers)", () => {
  it('keeps an entry, hands a new stream back on every get, and waits for a set in progress', async () => {
    const s = setup();
    const handler = s.data.useCache;
    const stored = handler.set('fn', Promise.resolve(useCacheEntry('v1', s.now())));
    const [first] = await Promise.all([handler.get('fn', []), stored]);
    expect(await textOf(first)).toBe('v1');
    expect(await textOf(await handler.get('fn', []))).toBe('v1');
    expect(await handler.getExpiration(['_N_T_/isr'])).toBe(Number.POSITIVE_INFINITY);
  });

  it('misses past its revalidate time, and once a tag or soft tag was revalidated', async () => {
    const s = setup();
    const handler = s.data.useCache;
    await handler.set('a', Promise.resolve(useCacheEntry('a', s.now(), { revalidate: 1 })));
    await handler.set('b', Promise.resolve(useCacheEntry('b', s.now())));
    await handler.set('c', Promise.resolve(useCacheEntry('c', s.now())));
    s.advance(3_000);
    expect(await handler.get('a', [])).toBeUndefined();
    s.times.set('_n_t_/isr', s.now());
    s.advance(300);
    expect(await handler.get('b', ['_N_T_/isr'])).toBeUndefined();
    await handler.updateTags(['posts']);
    expect(await handler.get('c', [])).toBeUndefined();
  });

  it('keeps no dynamic entry (expire 0) and no entry whose stream failed', async () => {
    const s = setup();
    const handler = s.data.useCache;
    await handler.set('d', Promise.resolve(useCacheEntry('d', s.now(), { expire: 0 })));
    const failing = new ReadableStream<Uint8Array>({
      start: (controller) => controller.error(new Error('render failed')),
    });
    await handler.set('f', Promise.resolve({ ...useCacheEntry('', s.now()), value: failing }));
    expect([await handler.get('d', []), await handler.get('f', [])]).toEqual([
      undefined,
      undefined,
    ]);
  });
});

describe('the header that marks a render the service asks for', () => {
  it('is the one the service renderer sends (the edge strips it from viewers)', async () => {
    let sent: Headers | undefined;
    const renderer = new HttpRenderer({
      originUrl: 'http://127.0.0.1:9',
      maxBodyBytes: 1_000,
      fetch: (_url, init) => {
        sent = new Headers(init?.headers);
        return Promise.resolve(new Response('<p>', { headers: { 'content-type': 'text/html' } }));
      },
    });
    const cacheKey = normaliseCacheKey({ rawPath: '/isr' }, { allowedQueryParams: [] });
    await renderer.render({ cacheKey, signal: AbortSignal.timeout(1_000) });
    expect(sent?.get(REGENERATION_HEADER)).toBe('1');
    expect(
      isPrivilegedHeader(REGENERATION_HEADER, PRIVILEGED_HEADERS, PRIVILEGED_HEADER_PREFIXES),
    ).toBe(true);
  });
});

describe('DataCache with TagTimes that cannot read', () => {
  it('never hands out an entry it cannot check (fail closed)', async () => {
    const tagTimes = new TagTimes({ now: () => 10, read: () => Promise.reject(new Error('down')) });
    const cache = new DataCache<string>(1_000, tagTimes, () => 10);
    cache.set('k', { value: 'v', tags: ['posts'], bytes: 1 });
    expect(await cache.get('k', [])).toBeUndefined();
  });
});
