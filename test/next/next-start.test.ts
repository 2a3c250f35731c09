import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { NEXT_BASELINE } from '../helpers/next-baseline.js';
import { ask, renderId } from '../helpers/next-http.js';
import {
  navigationHeaders,
  rscSearchParam,
  rscUrl,
  segmentPrefetchHeaders,
  treePrefetchHeaders,
  type RscHeaders,
} from '../helpers/next-rsc.js';

/** A cold `next build` of the fixture takes ~15 s here; CI machines may be slower. */
const BUILD_TIMEOUT_MS = 300_000;

type ComputeRsc = (...headers: (string | undefined)[]) => Promise<string>;
const nextRsc = createRequire(import.meta.url)(
  'next/dist/shared/lib/router/utils/cache-busting-search-param.js',
) as { computeCacheBustingSearchParam: ComputeRsc };

let app: NextApp;
beforeAll(async () => {
  app = await startNextApp();
}, BUILD_TIMEOUT_MS);
afterAll(async () => {
  await app?.stop();
});

describe('the fixture app under next start alone (the baseline)', () => {
  it.each(NEXT_BASELINE.map((baseline) => [baseline.name, baseline] as const))(
    '%s',
    async (_name, baseline) => {
      const answers = await baseline.viewer(app);
      expect(answers.length).toBeGreaterThan(0);
      baseline.nextStart?.(answers);
    },
  );
});

describe('_rsc', () => {
  const variants: [string, RscHeaders][] = [
    ['a navigation', navigationHeaders()],
    ['a tree prefetch', treePrefetchHeaders()],
    ['a segment prefetch', segmentPrefetchHeaders('/posts/$d$slug/__PAGE__')],
    [
      'a navigation with its tree and Next-URL',
      {
        rsc: '1',
        'next-router-state-tree': '%5B%22%22%5D',
        'next-url': '/isr',
      },
    ],
  ];

  it.each(variants)('is computed as Next computes it for %s', async (_name, headers) => {
    const expected = await nextRsc.computeCacheBustingSearchParam(
      headers['next-router-prefetch'],
      headers['next-router-segment-prefetch'],
      headers['next-router-state-tree'],
      headers['next-url'],
    );
    expect(rscSearchParam(headers)).toBe(expected);
  });

  it('is checked by next start: a wrong or missing one is redirected (307) to the right one', async () => {
    const headers = segmentPrefetchHeaders('/isr/__PAGE__');
    const wrong = await ask(`${app.url}/isr?_rsc=made-up`, { headers: { ...headers } });
    const missing = await ask(`${app.url}/isr`, { headers: { ...navigationHeaders() } });
    const right = await ask(rscUrl(app.url, '/isr', headers), { headers: { ...headers } });
    expect([wrong.status, wrong.headers.get('location')]).toEqual([
      307,
      `/isr?_rsc=${rscSearchParam(headers)}`,
    ]);
    expect([missing.status, missing.headers.get('location')]).toEqual([307, '/isr?_rsc']);
    expect(right.status).toBe(200);
  });

  it('is ignored on a request without RSC headers: the HTML page answers', async () => {
    const answer = await ask(`${app.url}/isr?_rsc=made-up`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });
});

describe('x-prerender-revalidate', () => {
  it("with the build's preview id, renders an ISR page again at once (REVALIDATED)", async () => {
    const before = renderId(await ask(`${app.url}/posts/world`));
    const forced = await ask(`${app.url}/posts/world`, {
      headers: { 'x-prerender-revalidate': app.previewModeId },
    });
    expect(forced.headers.get('x-nextjs-cache')).toBe('REVALIDATED');
    expect(renderId(forced)).not.toBe(before);
    expect(renderId(await ask(`${app.url}/posts/world`))).toBe(renderId(forced));
  });

  it('with any other value, is ignored (the cached render answers)', async () => {
    const before = renderId(await ask(`${app.url}/posts/world`));
    const ignored = await ask(`${app.url}/posts/world`, {
      headers: { 'x-prerender-revalidate': 'a'.repeat(32) },
    });
    expect(ignored.headers.get('x-nextjs-cache')).toBe('HIT');
    expect(renderId(ignored)).toBe(before);
  });
});
