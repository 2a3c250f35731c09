/**
 * Issue 34, Next's data cache: the fixture under `next start` with `facetheory-isr/next` as its
 * cacheHandler and cacheHandlers, two instances behind one service (the origin and the
 * revalidate function on the local backends, the adapters reading tag times from the latter
 * through npm start's HTTP front), each data cache kind compared with `next start` alone.
 * The service runs on the real clock, as the Next processes must (its 202 waits out the
 * adapters' 250 ms reuse of tag-time reads, as deployed; the test itself never waits on time),
 * with no clock skew margin (one machine, one clock). The same timing on the clock port, with its
 * controls, is data-cache-timing.test.ts's. Only the ISR case moves time (its page's own), on a
 * second service of its own, whose tag times no instance reads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { systemClock } from '../../lambda/core/clock.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import type { PassThrough } from '../../lambda/core/serve/ports.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { bundleNextAdapter } from '../../next/build.js';
import { TestClock } from '../helpers/clock.js';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { startBlindEndpoint, startDataSource } from '../helpers/next-data.js';
import { ask, eventually, renderId, type Answer } from '../helpers/next-http.js';
import { createOriginHarness, type OriginHarness } from '../helpers/origin-harness.js';
import { recordingCdn } from '../helpers/revalidate.js';
import { createRevalidateHarness } from '../helpers/revalidate-harness.js';
import { until } from '../local/npm-start.js';

const BUILD_TIMEOUT_MS = 300_000;
const folder = mkdtempSync(join(tmpdir(), 'isr-next-data-'));
const ONE_CLOCK = { ISR_CLOCK_SKEW_MARGIN_SECONDS: '0' };
const PRESET = { ISR_PRESET: 'nextjs', RENDER_ORIGIN_URL: 'http://127.0.0.1:9' };

type Instance = 'a' | 'b' | 'blind';
let source: Awaited<ReturnType<typeof startDataSource>>;
let blindEndpoint: Awaited<ReturnType<typeof startBlindEndpoint>>;
let alone: NextApp;
const apps: Partial<Record<Instance, NextApp>> = {};
let h: OriginHarness;
let rv: ReturnType<typeof createRevalidateHarness>;
/** The second service, on a test clock: the ISR case runs its page's time out. */
let timed: OriginHarness;
let timedRv: ReturnType<typeof createRevalidateHarness>;
let clock: TestClock;
let front: HttpFront;
let service: OriginHarness['invoke'];
/** The instance that renders the service's regenerations and gets its passes. */
let via: Instance = 'a';
/** Revalidations the service accepted, in order. */
let revalidations = 0;
/** The adapters' reads of tag times: their tags and bytes each way. */
const tagReads: { tags: string[]; bytesIn: number; bytesOut: number }[] = [];

const appOf = (instance: Instance): NextApp => {
  const app = apps[instance];
  if (app === undefined) throw new Error(`next start ${instance} is not up`);
  return app;
};
const renderer: Renderer = {
  render: (request) =>
    new HttpRenderer({ originUrl: appOf(via).url, maxBodyBytes: 5_000_000 }).render(request),
};
const passThrough: PassThrough = {
  forward: (request) =>
    new HttpPassThrough({ originUrl: appOf(via).url, maxBodyBytes: 5_000_000 }).forward(request),
};

beforeAll(async () => {
  const adapter = join(folder, 'index.mjs');
  await bundleNextAdapter(adapter);
  [source, blindEndpoint] = await Promise.all([startDataSource(), startBlindEndpoint()]);
  clock = new TestClock(Math.floor(Date.now() / 1000));
  [h, timed] = await Promise.all([
    createOriginHarness({ renderer, clock: systemClock, env: { ...PRESET, ...ONE_CLOCK } }),
    createOriginHarness({ renderer, clock, env: PRESET }),
  ]);
  rv = createRevalidateHarness(h, { cdn: recordingCdn(), env: ONE_CLOCK });
  timedRv = createRevalidateHarness(timed, { cdn: recordingCdn() });
  const handler = h.handlerWith({ passThrough });
  service = (target) => h.invoke(target, { handler });
  front = await startHttpFront({
    handler,
    revalidateHandler: async (event, context) => {
      const result = await rv.handler(event, context);
      if (event.rawPath === '/_isr/revalidate' && result.statusCode === 202) revalidations += 1;
      if (event.rawPath.endsWith('/tag-times')) {
        const tags = (JSON.parse(event.body ?? '{}') as { tags: string[] }).tags;
        tagReads.push({
          tags,
          bytesIn: event.body?.length ?? 0,
          bytesOut: result.body?.length ?? 0,
        });
      }
      return result;
    },
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
  });
  const withAdapter = (revalidateUrl: string) => ({
    FIXTURE_CACHE_HANDLER: adapter,
    FIXTURE_CACHE_HANDLERS: adapter,
    FIXTURE_DATA_URL: source.url,
    ISR_REVALIDATE_URL: revalidateUrl,
  });
  const serviceUrl = `${front.url}/_isr/revalidate`;
  [alone, apps.a, apps.b, apps.blind] = await Promise.all([
    startNextApp({ env: { FIXTURE_DATA_URL: source.url } }),
    startNextApp({ env: withAdapter(serviceUrl) }),
    startNextApp({ env: withAdapter(serviceUrl) }),
    startNextApp({ env: withAdapter(`${blindEndpoint.url}/_isr/revalidate`) }),
  ]);
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([alone, ...Object.values(apps)].map((app) => app?.stop()));
  await front?.close();
  await Promise.all([source?.close(), blindEndpoint?.close()]);
  h?.destroy();
  timed?.destroy();
  rmSync(folder, { recursive: true, force: true });
});

const field = (text: string | undefined, id: string) =>
  new RegExp(`id="${id}">([^<]+)<`).exec(text ?? '')?.[1];
const stampOf = (text: string | undefined) =>
  /data-render-id="([0-9a-f-]{36})"/.exec(text ?? '')?.[1];
const dateOf = (answer: { text?: string | undefined }) =>
  (JSON.parse(answer.text ?? '{}') as { date?: string }).date;

/** The app's revalidateTag; through an adapter, resolves once the service has accepted it. */
async function revalidateTag(app: NextApp, tag: string, expire = false) {
  const before = revalidations;
  const answer = await ask(`${app.url}/api/revalidate?tag=${tag}${expire ? '&expire=1' : ''}`, {
    method: 'POST',
  });
  expect(answer.status).toBe(200);
  // A route handler's revalidations run after its answer (Next's pendingWaitUntil).
  if (app !== alone && app !== apps.blind)
    await until(
      () => revalidations,
      (n) => n > before,
    );
}

describe("Next's data cache kinds behind the service, as under next start alone", () => {
  it("a force-static route over unstable_cache({ tags: ['date'] }): one date until revalidateTag('date')", async () => {
    const direct = () => ask(`${alone.url}/api/data/date`);
    const [first, second] = [await direct(), await direct()];
    expect(dateOf(second)).toBe(dateOf(first));
    await revalidateTag(alone, 'date', true);
    await eventually(direct, (answer) => dateOf(answer) !== dateOf(first));

    // The preset's edge sends /api/** straight to the upstream: the data cache is all there is.
    const instance = (name: Instance) => () => ask(`${appOf(name).url}/api/data/date`);
    const [a1, a2, b1] = [await instance('a')(), await instance('a')(), await instance('b')()];
    expect(dateOf(a2)).toBe(dateOf(a1));
    await revalidateTag(appOf('a'), 'date', true);
    expect(dateOf(await instance('a')())).not.toBe(dateOf(a1));
    expect(dateOf(await instance('b')())).not.toBe(dateOf(b1));
  });

  it('an ISR page: unstable_cache (revalidate: false) and a force-cache fetch outlive its regenerations', async () => {
    const one = await ask(`${alone.url}/data/isr/1`);
    const two = await ask(`${alone.url}/data/isr/2`);
    expect(renderId(two)).not.toBe(renderId(one));
    for (const id of ['kept-data', 'fetched-data'])
      expect(field(two.text, id)).toBe(field(one.text, id));

    via = 'a';
    const first = await timed.invoke('/data/isr/1');
    expect(first.cache).toBe('MISS');
    clock.advance(3_601); // the page's own time runs out
    expect((await timed.invoke('/data/isr/1')).cache).toBe('STALE');
    expect(await timedRv.work()).toContain('/data/isr/1');
    const regenerated = await timed.invoke('/data/isr/1');
    expect(regenerated.cache).toBe('HIT');
    expect(stampOf(regenerated.text)).not.toBe(stampOf(first.text));
    const other = await timed.invoke('/data/isr/2');
    for (const page of [regenerated, other]) {
      for (const id of ['kept-data', 'fetched-data']) {
        expect(field(page.text, id)).toBe(field(first.text, id));
      }
    }
    expect(field(first.text, 'fetched-data')).toMatch(/^fetched \d+$/);
  });

  it("a dynamic page's force-cache fetch and its layout's tagged unstable_cache are kept between loads", async () => {
    const loads = async (load: () => Promise<{ text?: string | undefined }>) => {
      const [first, second] = [await load(), await load()];
      expect(stampOf(second.text)).not.toBe(stampOf(first.text));
      for (const id of ['fetched-data', 'layout-data']) {
        expect(field(second.text, id)).toBe(field(first.text, id));
      }
    };
    await loads(() => ask(`${alone.url}/data/dynamic`));
    via = 'a';
    await loads(() => service('/data/dynamic'));
    expect((await service('/data/dynamic')).cache).toBe('PASS');
  });

  it("'use cache' (cacheHandlers): kept between loads until revalidateTag of its tag", async () => {
    const check = async (load: () => Promise<{ text?: string | undefined }>, app: NextApp) => {
      const [first, second] = [await load(), await load()];
      expect(field(first.text, 'use-cache-data')).toMatch(/^use-cache \d+ at /);
      expect(field(second.text, 'use-cache-data')).toBe(field(first.text, 'use-cache-data'));
      await revalidateTag(app, 'use-cache-data', true);
      const changed = (page: { text?: string | undefined }) =>
        field(page.text, 'use-cache-data') !== field(first.text, 'use-cache-data');
      // next start alone applies the route handler's revalidation just after answering it; the
      // adapter's is in once the service accepted it (revalidateTag above waits for that).
      const after =
        app === alone ? await eventually(load as () => Promise<Answer>, changed) : await load();
      expect(changed(after)).toBe(true);
    };
    await check(() => ask(`${alone.url}/data/use-cache`), alone);
    via = 'a';
    await check(() => service('/data/use-cache'), appOf('a'));
  });
});

describe('two next start instances behind one service (issue 34)', () => {
  /** Renders `path` through the service by `instance`, its layout data as that one has it. */
  const layoutVia = async (instance: Instance, path: string) => {
    const page = await ask(`${appOf(instance).url}${path}`);
    return field(page.text, 'layout-data');
  };

  it.each([
    ['a', 'b'],
    ['b', 'a'],
  ] as const)(
    'after revalidateTag on %s, the next regeneration renders new data, rendered by %s',
    async (revalidating, rendering) => {
      const path = `/data/isr/${revalidating}${rendering}`;
      via = revalidating;
      const first = await service(path);
      expect(first.cache).toBe('MISS');
      const cached = await layoutVia(rendering, '/data/dynamic'); // what the renderer has kept
      await revalidateTag(appOf(revalidating), 'data-layout');
      via = rendering;
      const readsBefore = tagReads.length;
      const regenerations = await rv.work();
      expect(regenerations).toContain(path);
      // Each regeneration reads its tags' times once, in one batch (the cost per render).
      const reads = tagReads.slice(readsBefore);
      expect(reads).toHaveLength(regenerations.length);
      expect(reads.map((read) => read.tags)).toContainEqual(
        expect.arrayContaining(['data-layout', `_n_t_${path}`]),
      );
      const regenerated = await service(path);
      expect(regenerated.cache).toBe('HIT');
      expect(stampOf(regenerated.text)).not.toBe(stampOf(first.text));
      const layout = field(regenerated.text, 'layout-data');
      expect(layout).not.toBe(cached);
      expect(layout).not.toBe(field(first.text, 'layout-data'));
      // A viewer's pass to either instance gets the new data too.
      expect(await layoutVia(rendering, '/data/dynamic')).toBe(layout);
    },
  );

  it('control: an instance that never learns tag times renders the data it had cached', async () => {
    const path = '/data/isr/blind';
    via = 'a';
    await service(path);
    const cached = await layoutVia('blind', '/data/dynamic');
    await revalidateTag(appOf('a'), 'data-layout');
    via = 'blind';
    expect(await rv.work()).toContain(path);
    const regenerated = await service(path);
    expect(field(regenerated.text, 'layout-data')).toBe(cached);
  });
});
