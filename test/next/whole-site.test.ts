/**
 * Issue 22, done when: the fixture Next.js app behind the service's local front with the `nextjs`
 * preset (`ISR_PRESET=nextjs`, as `npm start` reads it) behaves as it does under `next start`
 * alone. The origin runs on in-memory ports (test/local/whole-site.unit.test.ts's wiring); each
 * row is compared with a direct call to the same `next start`.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { createStreamingOriginHandler } from '../../lambda/origin/streaming.js';
import { loadOriginConfig, type OriginConfig } from '../../lambda/shared/config.js';
import { createObservability } from '../../lambda/shared/observability.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { installLambdaStreaming } from '../../local/lambda-streaming.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService, type MemoryService } from '../helpers/memory-service.js';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { BYPASS_COOKIE, DRAFT_SECRET } from '../helpers/next-baseline-flows.js';
import { featureCases } from '../helpers/next-baseline-features.js';
import { IMMUTABLE, RSC } from '../helpers/next-baseline-pages.js';
import {
  ask,
  cookiePair,
  formActionIds,
  renderId,
  staticAssetPaths,
  type Answer,
  type AnswerRequest,
} from '../helpers/next-http.js';
import { navigationHeaders, rscUrl } from '../helpers/next-rsc.js';

/** A cold `next build` of the fixture takes ~15 s here; CI machines may be slower. */
const BUILD_TIMEOUT_MS = 300_000;

let app: NextApp;
let config: OriginConfig;
let service: MemoryService;
let front: HttpFront;

/** The origin's settings as `npm start` reads them with ISR_PRESET=nextjs and the app upstream. */
const presetConfig = (upstream: string) =>
  loadOriginConfig({
    ISR_PRESET: 'nextjs',
    RENDER_ORIGIN_URL: upstream,
    FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
    ISR_BODY_BUCKET: 'isr-bodies',
    ISR_QUEUE_URL: 'http://127.0.0.1:1/queue/isr-regeneration',
  });

beforeAll(async () => {
  app = await startNextApp();
  config = presetConfig(app.url);
  const upstream = { originUrl: app.url, maxBodyBytes: config.passBodyMaxBytes };
  service = memoryService({
    renderer: new HttpRenderer({
      originUrl: app.url,
      maxBodyBytes: config.maxBodyBytes,
      variantParam: config.settings.variantParam,
    }),
    passThrough: new HttpPassThrough(upstream),
    keyPolicy: config.keyPolicy,
    hitForPassSeconds: config.hitForPassSeconds,
  });
  // As deployed: behind a RESPONSE_STREAM function URL, in Lambda's runtime (played locally).
  installLambdaStreaming();
  const handler = {
    streaming: createStreamingOriginHandler({
      deps: service.originDeps,
      tenantHeader: undefined,
      ...createObservability('origin'),
    }),
  };
  front = await startHttpFront({
    handler,
    port: 0,
    tenantHeader: undefined,
    variantHeaders: config.settings.variantHeaders.map((rule) => rule.name),
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront: await testCloudFront(config.settings, handler),
  });
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await front?.close();
  await app?.stop();
});

/** Asks the front and then next start directly, the same request; both answers. */
async function both(path: string, init: AnswerRequest = {}) {
  const viaCache = await ask(`${front.url}${path}`, init);
  const direct = await ask(`${app.url}${path}`, init);
  return { viaCache, direct };
}

/** What "as under next start" compares (next start's own cache headers aside). */
const visible = (answer: Answer) => ({
  status: answer.status,
  'content-type': answer.headers.get('content-type'),
  location: answer.headers.get('location'),
});

const cacheOf = (answer: Answer) => answer.headers.get('x-isr-cache');

/** How many times Next rendered the page's route so far, as the page printed it. */
const renderCountOf = (answer: Answer | undefined) =>
  Number(/data-render-count="(\d+)"/.exec(answer?.text ?? '')?.[1]);

/** Who answered: CloudFront's copy (`EDGE`, it keeps a page for its s-maxage), else the origin's status. */
const servedBy = (answer: Answer) =>
  answer.headers.get('x-cache') === 'Hit from cloudfront' ? 'EDGE' : cacheOf(answer);

/**
 * The baseline case whose name holds `part`: what next start alone answers (test/next/next-start.test.ts),
 * asked of the service. The cases not asked here differ as NEXTJS.md documents: a redirect built from
 * the Host names the host the service is told (`publicOrigin`), and headers() and middleware headers
 * on stored pages are compared in their own tests.
 */
function featureCase(part: string) {
  const found = featureCases.find((baseline) => baseline.name.includes(part));
  if (found === undefined) throw new Error(`no baseline case "${part}"`);
  return found;
}

describe('the fixture Next.js app behind the nextjs preset (issue 22)', () => {
  it("an ISR page: MISS, then CloudFront's copy with the same body, the render next start serves", async () => {
    const { viaCache: first, direct } = await both('/isr');
    const second = await ask(`${front.url}/isr`);
    expect(visible(first)).toEqual(visible(direct));
    expect([servedBy(first), servedBy(second)]).toEqual(['MISS', 'EDGE']);
    expect(second.text).toBe(first.text);
    expect(renderId(first)).toBe(renderId(direct));
  });

  it('an RSC navigation: text/x-component, cached; a made-up _rsc shares its key', async () => {
    const headers = { ...navigationHeaders() };
    const direct = await ask(rscUrl(app.url, '/isr', navigationHeaders()), { headers });
    const first = await ask(rscUrl(front.url, '/isr', navigationHeaders()), { headers });
    const second = await ask(rscUrl(front.url, '/isr', navigationHeaders()), { headers });
    const madeUp = await ask(`${front.url}/isr?_rsc=made-up`, { headers });
    expect(visible(first)).toEqual(visible(direct));
    expect(first.headers.get('content-type')).toBe(RSC);
    expect(renderId(first)).toBe(renderId(direct));
    expect([first, second, madeUp].map(servedBy)).toEqual(['MISS', 'EDGE', 'EDGE']);
    expect(second.text).toBe(first.text);
    expect(madeUp.text).toBe(first.text);
  });

  it("a dynamic page (reads cookies) passes: the viewer's cookie reaches Next; nothing stored", async () => {
    const stored = service.state.metas.size;
    const init = { headers: { cookie: 'fixture-name=ann' } };
    const { viaCache, direct } = await both('/dynamic', init);
    const again = await ask(`${front.url}/dynamic`, init);
    expect(visible(viaCache)).toEqual(visible(direct));
    for (const answer of [viaCache, again]) {
      expect(answer.text).toContain('name=ann');
      expect(cacheOf(answer)).toBe('PASS');
    }
    expect(renderId(again)).not.toBe(renderId(viaCache));
    expect(service.state.metas.size).toBe(stored);
  });

  it('a route handler: GET /api/counter runs on every call; a POST reaches Next', async () => {
    const count = (answer: Answer) => (JSON.parse(answer.text) as { count: number }).count;
    const first = await ask(`${front.url}/api/counter`);
    const second = await ask(`${front.url}/api/counter`);
    expect(first.headers.get('content-type')).toBe('application/json');
    expect(count(second)).toBe(count(first) + 1);
    const posted = await both('/api/counter', { method: 'POST' });
    expect(visible(posted.viaCache)).toEqual(visible(posted.direct));
    const revalidate = await ask(`${front.url}/api/revalidate`, { method: 'POST' });
    expect(revalidate.status).toBe(200);
    expect(JSON.parse(revalidate.text)).toMatchObject({ revalidated: { tag: null, path: null } });
  });

  it('draft mode: /api/draft sets the bypass cookie; a request carrying it reaches Next', async () => {
    const path = `/api/draft?secret=${DRAFT_SECRET}&slug=hello`;
    const { viaCache: enabled, direct } = await both(path);
    expect(visible(enabled)).toEqual(visible(direct));
    const cookie = cookiePair(enabled, BYPASS_COOKIE);
    expect(cookie).toMatch(/^__prerender_bypass=[0-9a-f]{32}$/);
    const drafts = [1, 2].map(() =>
      ask(`${front.url}/posts/hello`, { headers: { cookie: cookie! } }),
    );
    const answers = await Promise.all(drafts);
    for (const draft of answers) {
      expect(draft.status).toBe(200);
      expect(draft.text).toContain('Hello, draft edition.');
      expect(cacheOf(draft)).not.toBe('HIT');
    }
    expect(renderId(answers[1])).not.toBe(renderId(answers[0])); // each one a render by Next
    const published = await ask(`${front.url}/posts/hello`);
    expect(published.text).toContain('The first post.');
    expect(published.text).not.toContain('Hello, draft edition.');
  });

  it('a Server Action form posted on /form: the 303, its Location and cookie, as next start', async () => {
    const id = formActionIds((await ask(`${front.url}/form`)).text).get('save-name');
    expect(id).toBeDefined();
    const post = (url: string) => {
      const form = new FormData();
      form.set(`$ACTION_ID_${id}`, '');
      form.set('name', 'alice');
      return ask(`${url}/form`, { method: 'POST', headers: { origin: url }, body: form });
    };
    const viaCache = await post(front.url);
    const direct = await post(app.url);
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.status).toBe(303);
    expect(viaCache.cookies).toEqual(direct.cookies);
  });

  it('a build asset under /_next/static keeps its immutable Cache-Control and bytes', async () => {
    const stored = service.state.metas.size;
    const script = staticAssetPaths((await ask(`${app.url}/`)).text).find((p) => p.endsWith('.js'));
    const { viaCache, direct } = await both(script!);
    expect(visible(viaCache)).toEqual(visible(direct));
    expect(viaCache.headers.get('cache-control')).toBe(IMMUTABLE);
    expect(viaCache.body.equals(direct.body)).toBe(true);
    expect(service.state.metas.size).toBe(stored);
  });

  it('notFound() on /posts/<unknown> and redirect() on /old answer as under next start', async () => {
    const missing = await both('/posts/no-such-post');
    expect(visible(missing.viaCache)).toEqual(visible(missing.direct));
    expect(missing.viaCache.status).toBe(404);
    const old = await both('/old');
    expect(visible(old.viaCache)).toEqual(visible(old.direct));
    expect(old.viaCache.status).toBe(307);
  });

  it('dynamicParams = false: its prerendered pages are stored, any other param is a 404', async () => {
    const answers = await featureCase('dynamicParams = false').viewer({ url: front.url });
    expect(answers.map(servedBy)).toEqual(['MISS', 'EDGE', 'MISS', 'PASS']);
    const direct = await ask(`${app.url}/fixed/c`);
    expect(visible(answers[3])).toEqual(visible(direct));
  });

  it("an edge middleware's rewrite built from the Host answers the page it names, stored", async () => {
    const [answer] = await featureCase('a rewrite built from the Host').viewer({ url: front.url });
    expect(cacheOf(answer)).toBe('MISS');
  });

  it('loading.jsx streams ahead of its page as under next start; the first request renders once (issue 34)', async () => {
    // An unknown dynamic URL: one render, whose answer the viewer gets (no second trip).
    const first = await ask(`${front.url}/streaming`);
    const next = await ask(`${app.url}/streaming`);
    expect(visible(first)).toEqual(visible(next));
    expect(first.headers.get('cache-status')).toContain('fwd=bypass');
    expect(renderCountOf(next)).toBe(renderCountOf(first) + 1);
    // Later ones pass on its hit-for-pass mark, streamed: the fallback before the gate opens.
    const answers = await featureCase('loading.jsx').viewer({ url: front.url });
    expect(answers.map(cacheOf)).toEqual([null]); // the gate's POST goes to /api/** past the service
    expect(renderCountOf(await ask(`${app.url}/streaming`))).toBe(renderCountOf(next) + 2);
  });

  it("after() in a route handler runs once the passed answer is sent, as next start's", async () => {
    const answers = await featureCase('after()').viewer({ url: front.url });
    // /api/** goes past the service at the edge (the preset's bypassPaths), as CloudFront routes it.
    expect(answers.map(cacheOf)).toEqual([null, null]);
  });
});
