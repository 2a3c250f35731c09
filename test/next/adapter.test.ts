/**
 * The fixture app under a real `next start` with `facetheory-isr/next` (bundled as shipped) as
 * its cacheHandler, rendered through the service's origin on the local backends, its
 * revalidations signed (HMAC) to the real revalidate handler behind npm start's HTTP front. Shows
 * that the service learns each page's tags from Next, and that the app's revalidateTag,
 * updateTag and revalidatePath reach it as the right revalidation, and reach viewers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { StaticSecretSource } from '../../lambda/adapters/secret-source/static.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { bundleNextAdapter } from '../../next/build.js';
import { TestClock } from '../helpers/clock.js';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { ask, formActionIds, type AnswerRequest } from '../helpers/next-http.js';
import { createOriginHarness, type OriginHarness } from '../helpers/origin-harness.js';
import { recordingCdn } from '../helpers/revalidate.js';
import { createRevalidateHarness } from '../helpers/revalidate-harness.js';
import { until } from '../local/npm-start.js';

const BUILD_TIMEOUT_MS = 300_000;
const SECRET = 'next-adapter-key';
const folder = mkdtempSync(join(tmpdir(), 'isr-next-adapter-'));

interface Call {
  readonly key: string | undefined;
  readonly body: Record<string, unknown>;
  readonly status: number | undefined;
}

let next: NextApp | undefined;
let front: HttpFront | undefined;
let h: OriginHarness;
let clock: TestClock;
let rv: ReturnType<typeof createRevalidateHarness>;
/** Every revalidation the endpoint answered, in order. */
const calls: Call[] = [];
/** Renders from next start once it is up (the harness is built first). */
let upstream: Renderer | undefined;
const renderer: Renderer = {
  render: (request) => {
    if (upstream === undefined) throw new Error('next start is not up yet');
    return upstream.render(request);
  },
};

beforeAll(async () => {
  const adapter = join(folder, 'index.mjs');
  await bundleNextAdapter(adapter);
  // The endpoint checks HMAC timestamps on this clock; the adapter signs with the real one.
  clock = new TestClock(Math.floor(Date.now() / 1000));
  h = await createOriginHarness({ renderer, clock });
  rv = createRevalidateHarness(h, {
    cdn: recordingCdn(),
    secret: new StaticSecretSource(SECRET),
    open: false,
  });
  front = await startHttpFront({
    handler: h.handlerWith({}),
    revalidateHandler: async (event, context) => {
      const result = await rv.handler(event, context);
      // The data cache's reads of tag times (POST …/tag-times) are not revalidations.
      if (event.rawPath !== '/_isr/revalidate') return result;
      calls.push({
        key: event.headers['idempotency-key'],
        body: JSON.parse(event.body ?? '{}') as Record<string, unknown>,
        status: result.statusCode,
      });
      return result;
    },
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
  });
  next = await startNextApp({
    env: {
      FIXTURE_CACHE_HANDLER: adapter,
      ISR_REVALIDATE_URL: `${front.url}/_isr/revalidate`,
      ISR_REVALIDATE_SECRET: SECRET,
    },
  });
  upstream = new HttpRenderer({ originUrl: next.url, maxBodyBytes: 5_000_000 });
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await next?.stop();
  await front?.close();
  h?.destroy();
  rmSync(folder, { recursive: true, force: true });
});

const stampOf = (text: string | undefined) =>
  /data-render-id="([0-9a-f-]{36})"/.exec(text ?? '')?.[1];

/** The calls the endpoint answers from now on, once `count` of them have come. */
async function nextCalls(count: number, action: () => Promise<unknown>): Promise<Call[]> {
  const before = calls.length;
  await action();
  // A route handler's revalidations run after its answer (Next's pendingWaitUntil).
  await until(
    () => calls.length - before,
    (arrived) => arrived >= count,
  );
  return calls.slice(before);
}

const app = (path: string, init: AnswerRequest = { method: 'POST' }) =>
  ask(`${next?.url ?? ''}${path}`, init);

describe('facetheory-isr/next as the cacheHandler of next start', () => {
  it("puts Next's tags on the answer, so the service keeps them with the page", async () => {
    const direct = await app('/isr', {});
    expect(direct.headers.get('cache-tag')).toBe(
      'posts,post:hello,_N_T_/layout,_N_T_/isr/layout,_N_T_/isr/page,_N_T_/isr',
    );
    expect(direct.headers.get('x-next-cache-tags')).toBeNull();
    const page = await h.invoke('/isr');
    expect([page.status, page.cache]).toEqual([200, 'MISS']);
    expect(page.headers['cache-tag']).toBeUndefined();
    const meta = await h.cacheTable.getMeta(h.keyFor('/isr').pk, { consistent: true });
    expect([...(meta?.tags ?? [])].sort()).toEqual([
      '_n_t_/isr',
      '_n_t_/isr/layout',
      '_n_t_/isr/page',
      '_n_t_/layout',
      'post:hello',
      'posts',
    ]);
  });

  it("revalidateTag('posts', 'max'): stale, regenerated now; viewers get the new page", async () => {
    const old = await h.invoke('/isr');
    expect(old.cache).toBe('HIT');
    const [call] = await nextCalls(1, () => app('/api/revalidate?tag=posts'));
    expect(call).toEqual({
      key: expect.stringMatching(/^next-[0-9a-f-]{36}$/),
      body: { tags: ['posts'], mode: 'stale', regenerate: true },
      status: 202,
    });
    const stale = await h.invoke('/isr');
    expect([stale.cache, stampOf(stale.text)]).toEqual(['STALE', stampOf(old.text)]);
    expect(await rv.work()).toContain('/isr');
    // The origin reuses its read of the revalidations in progress for 250 ms (issue 23): past
    // that, it sees the tag's marking done and the new generation is a HIT.
    clock.advanceMs(1_000);
    const fresh = await h.invoke('/isr');
    expect(fresh.cache).toBe('HIT');
    expect(stampOf(fresh.text)).not.toBe(stampOf(old.text));
  });

  it("revalidateTag('posts', { expire: 0 }): expired, the next viewer waits for a new render", async () => {
    const old = await h.invoke('/isr');
    const [call] = await nextCalls(1, () => app('/api/revalidate?tag=posts&expire=1'));
    expect(call?.body).toEqual({ tags: ['posts'], mode: 'expire' });
    const page = await h.invoke('/isr');
    expect(page.cache).toBe('MISS');
    expect(stampOf(page.text)).not.toBe(stampOf(old.text));
  });

  it("revalidatePath('/isr'): the path, and its soft tag", async () => {
    await h.invoke('/isr');
    const [call] = await nextCalls(1, () => app('/api/revalidate?path=/isr'));
    expect(call?.body).toEqual({ paths: ['/isr'], tags: ['_N_T_/isr'], mode: 'expire' });
    expect((await h.invoke('/isr')).cache).toBe('MISS');
  });

  it("revalidatePath('/'): the root, by path and by both its soft tags", async () => {
    const [call] = await nextCalls(1, () => app('/api/revalidate?path=/'));
    expect(call?.body).toEqual({ paths: ['/'], tags: ['_N_T_/', '_N_T_/index'], mode: 'expire' });
    expect(call?.status).toBe(202);
  });

  it('updateTag in a Server Action: expired before the action answers', async () => {
    await h.invoke('/posts/hello');
    const form = await app('/form', {});
    const id = formActionIds(form.text).get('expire-posts') ?? '';
    const before = calls.length;
    const answer = await app('/form', {
      method: 'POST',
      headers: {
        origin: next?.url ?? '',
        'next-action': id,
        'content-type': 'text/plain;charset=UTF-8',
      },
      body: '[]',
    });
    expect(answer.status).toBe(200);
    // A Server Action awaits its revalidations: the call is in before the answer.
    expect(calls.slice(before).map((call) => call.body)).toEqual([
      { tags: ['posts'], mode: 'expire' },
    ]);
    expect((await h.invoke('/posts/hello')).cache).toBe('MISS');
  });

  it('gives each call its own Idempotency-Key', () => {
    const keys = calls.map((call) => call.key);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
