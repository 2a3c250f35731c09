import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { ask, formActionIds, renderId } from '../helpers/next-http.js';
import { navigationHeaders, rscUrl } from '../helpers/next-rsc.js';

/** What Next 16.4 hands a `cacheHandler`, observed through a handler that records each call. */

const BUILD_TIMEOUT_MS = 300_000;
const RECORDING_HANDLER = fileURLToPath(
  new URL('../fixtures/next-cache-handler/recording.js', import.meta.url),
);
const ISR_TAGS = '_N_T_/layout,_N_T_/isr/layout,_N_T_/isr/page,_N_T_/isr,posts,post:hello';
const ROUTE_KEY = (kind: string, path: string) =>
  new RegExp(`^/route-cache/${kind}/[0-9a-f]{64}/\\$${path.replace(/[./]/g, '\\$&')}$`);

interface Call {
  readonly call: string;
  readonly key?: string;
  readonly ctx?: Record<string, unknown>;
  readonly value?: { kind: string; headers?: Record<string, string>; tags?: string[] } | null;
  readonly tags?: string[];
  readonly durations?: { expire?: number } | null;
  readonly hit?: boolean;
}

const folder = mkdtempSync(join(tmpdir(), 'next-cache-handler-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A next start with the recording handler; `calls()` reads what it was handed so far. */
async function startRecorded(name: string, env: Record<string, string> = {}) {
  const log = join(folder, `${name}.jsonl`);
  const app = await startNextApp({
    env: { FIXTURE_CACHE_HANDLER: RECORDING_HANDLER, RECORDING_CACHE_HANDLER_LOG: log, ...env },
  });
  const calls = (call?: string): Call[] =>
    readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Call)
      .filter((entry) => call === undefined || entry.call === call);
  return { app, calls };
}

describe('a cacheHandler plugged in through FIXTURE_CACHE_HANDLER', () => {
  let recorded: Awaited<ReturnType<typeof startRecorded>>;
  let app: NextApp;
  beforeAll(async () => {
    recorded = await startRecorded('caching');
    app = recorded.app;
  }, BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await app?.stop();
  });

  it("starts empty: the build's prerendered copy is not read, the first request renders", async () => {
    const first = await ask(`${app.url}/isr`);
    const second = await ask(`${app.url}/isr`);
    expect([first.headers.get('x-nextjs-cache'), second.headers.get('x-nextjs-cache')]).toEqual([
      'MISS',
      'HIT',
    ]);
    expect(renderId(second)).toBe(renderId(first));
  });

  it("hands set() an APP_PAGE value whose x-next-cache-tags header lists the page's tags", () => {
    const set = recorded.calls('set').find((call) => call.value?.kind === 'APP_PAGE');
    expect(set?.key).toMatch(ROUTE_KEY('APP_PAGE', '/isr'));
    expect(set?.value?.headers?.['x-next-cache-tags']).toBe(ISR_TAGS);
    expect(set?.ctx).toEqual({
      kind: 'APP_PAGE',
      isRoutePPREnabled: false,
      isFallback: false,
      cacheControl: { revalidate: 3600, expire: 31536000 },
    });
  });

  it('hands set() the unstable_cache data as FETCH with its own tags, and get() its soft tags', () => {
    const set = recorded.calls('set').find((call) => call.value?.kind === 'FETCH');
    const get = recorded.calls('get').find((call) => call.ctx?.kind === 'FETCH');
    expect(set?.ctx).toMatchObject({ fetchCache: true, tags: ['posts', 'post:hello'] });
    expect(get?.ctx).toMatchObject({
      tags: ['posts', 'post:hello'],
      softTags: ['_N_T_/layout', '_N_T_/isr/layout', '_N_T_/isr/page', '_N_T_/isr'],
    });
  });

  it('hands set() an ISR route handler as APP_ROUTE, with its tags', async () => {
    await ask(`${app.url}/feed.json`);
    const set = recorded.calls('set').find((call) => call.value?.kind === 'APP_ROUTE');
    expect(set?.key).toMatch(ROUTE_KEY('APP_ROUTE', '/feed.json'));
    expect(set?.value?.headers?.['x-next-cache-tags']).toContain('_N_T_/feed.json,posts');
  });

  it('keeps HTML and RSC of a page in one entry: the RSC request reads the same key', async () => {
    const before = recorded.calls('set').length;
    const rsc = await ask(rscUrl(app.url, '/isr', navigationHeaders()), {
      headers: { ...navigationHeaders() },
    });
    expect(rsc.headers.get('x-nextjs-cache')).toBe('HIT');
    expect(recorded.calls('set')).toHaveLength(before);
  });

  it.each([
    ['/api/revalidate?tag=posts', ['posts'], { expire: 31536000 }],
    ['/api/revalidate?tag=posts&expire=1', ['posts'], { expire: 0 }],
    ['/api/revalidate?path=/isr', ['_N_T_/isr'], null],
    ['/api/revalidate?path=/', ['_N_T_/', '_N_T_/index'], null],
  ])('POST %s calls revalidateTag(%j, %j)', async (path, tags, durations) => {
    const before = recorded.calls('revalidateTag').length;
    await ask(`${app.url}${path}`, { method: 'POST' });
    expect(recorded.calls('revalidateTag').slice(before)).toEqual([
      expect.objectContaining({ tags, durations }),
    ]);
  });

  it('updateTag in a Server Action calls revalidateTag with no durations', async () => {
    const id = formActionIds((await ask(`${app.url}/form`)).text).get('expire-posts') ?? '';
    const before = recorded.calls('revalidateTag').length;
    await ask(`${app.url}/form`, {
      method: 'POST',
      headers: { origin: app.url, 'next-action': id, 'content-type': 'text/plain;charset=UTF-8' },
      body: '[]',
    });
    expect(recorded.calls('revalidateTag').slice(before)).toEqual([
      expect.objectContaining({ tags: ['posts'], durations: null }),
    ]);
  });

  it('is constructed per request, with these options', () => {
    const constructed = recorded.calls('constructor');
    expect(constructed.length).toBeGreaterThan(5);
    expect(constructed[0]).toMatchObject({
      options: {
        revalidatedTags: [],
        maxMemoryCacheSize: 52428800,
        flushToDisk: true,
        dev: false,
        keys: [
          'dev',
          'fs',
          'flushToDisk',
          'serverDistDir',
          'revalidatedTags',
          'maxMemoryCacheSize',
          '_requestHeaders',
          'fetchCacheKeyPrefix',
        ],
      },
    });
  });
});

describe('a cacheHandler whose get() always misses', () => {
  let app: NextApp;
  beforeAll(async () => {
    ({ app } = await startRecorded('missing', { RECORDING_CACHE_HANDLER_MISS: '1' }));
  }, BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await app?.stop();
  });

  it('makes next start render every request afresh, data included', async () => {
    const first = await ask(`${app.url}/isr`);
    const second = await ask(`${app.url}/isr`);
    expect(renderId(second)).not.toBe(renderId(first));
    const loadedAt = (answer: typeof first) => /data-loaded-at">([^<]+)/.exec(answer.text)?.[1];
    expect(loadedAt(second)).not.toBe(loadedAt(first));
    for (const answer of [first, second]) {
      expect(answer.headers.get('x-nextjs-cache')).toBe('MISS');
      expect(answer.headers.get('cache-control')).toBe(
        's-maxage=3600, stale-while-revalidate=31532400',
      );
      expect(answer.headers.get('last-modified')).toBeNull();
    }
  });
});

describe("Next's own cache with cacheMaxMemorySize: 0", () => {
  let app: NextApp;
  beforeAll(async () => {
    app = await startNextApp({ env: { FIXTURE_CACHE_MAX_MEMORY_SIZE: '0' } });
  }, BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await app?.stop();
  });

  it('still caches: the file-system cache answers the second request', async () => {
    const first = await ask(`${app.url}/posts/later`);
    const second = await ask(`${app.url}/posts/later`);
    expect(renderId(second)).toBe(renderId(first));
    expect(second.headers.get('x-nextjs-cache')).toBe('HIT');
  });
});
