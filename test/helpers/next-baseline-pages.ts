/**
 * The fixture app's pages, RSC payloads and assets: what a viewer gets, and what `next start`
 * alone adds on top (see next-baseline.ts for how the two halves are used).
 */
import { expect } from '@jest/globals';
import { ask, renderId, staticAssetPaths, type Answer } from './next-http.js';
import {
  navigationHeaders,
  rscUrl,
  segmentPrefetchHeaders,
  treePrefetchHeaders,
} from './next-rsc.js';
import type { BaselineCase } from './next-baseline.js';

export const HTML = 'text/html; charset=utf-8';
export const RSC = 'text/x-component';
/** The Vary Next sends on every App Router page and RSC answer (next start adds Accept-Encoding). */
export const NEXT_VARY =
  'rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch';
export const DYNAMIC_CACHE_CONTROL = 'private, no-cache, no-store, max-age=0, must-revalidate';
export const ISR_CACHE_CONTROL = 's-maxage=3600, stale-while-revalidate=31532400';
export const STATIC_CACHE_CONTROL = 's-maxage=31536000';
export const IMMUTABLE = 'public, max-age=31536000, immutable';

const header = (answer: Answer | undefined, name: string) => answer?.headers.get(name) ?? null;

/** The names a Vary header lists, lower case: a cache may reorder them or add its own. */
export function varyNames(answer: Answer): string[] {
  return (header(answer, 'vary') ?? '').split(',').map((name) => name.trim().toLowerCase());
}

function expectPage(answer: Answer, status = 200): void {
  expect(answer.status).toBe(status);
  expect(header(answer, 'content-type')).toBe(HTML);
  expect(varyNames(answer)).toEqual(expect.arrayContaining(NEXT_VARY.split(', ')));
}

function expectNextPage(answer: Answer | undefined, cache: string | null, control: string | null) {
  expect(header(answer, 'x-nextjs-cache')).toBe(cache);
  expect(header(answer, 'cache-control')).toBe(control);
  expect(header(answer, 'vary')).toBe(`${NEXT_VARY}, Accept-Encoding`);
}

const twice = async (url: string, init?: Parameters<typeof ask>[1]) => [
  await ask(url, init),
  await ask(url, init),
];

export const pageCases: readonly BaselineCase[] = [
  {
    name: 'a static page is prerendered once, at build time',
    async viewer({ url }) {
      const answers = await twice(`${url}/`);
      answers.forEach((answer) => expectPage(answer));
      expect(renderId(answers[1])).toBe(renderId(answers[0]));
      return answers;
    },
    nextStart([first]) {
      expectNextPage(first, 'HIT', STATIC_CACHE_CONTROL);
      expect(header(first, 'x-nextjs-prerender')).toBe('1, 1'); // Next sends it twice
      expect(header(first, 'etag')).toMatch(/^"\w+"$/);
      expect(header(first, 'last-modified')).toBeNull();
    },
  },
  {
    name: 'an ISR page (revalidate = 3600, tagged posts) answers from one render',
    async viewer({ url }) {
      const answers = await twice(`${url}/isr`);
      answers.forEach((answer) => expectPage(answer));
      expect(renderId(answers[0])).toBeDefined();
      expect(renderId(answers[1])).toBe(renderId(answers[0]));
      return answers;
    },
    nextStart: ([first]) => expectNextPage(first, 'HIT', ISR_CACHE_CONTROL),
  },
  {
    name: 'an ISR page with params is rendered on its first request, then reused',
    async viewer({ url }) {
      const answers = await twice(`${url}/posts/later`);
      answers.forEach((answer) => expectPage(answer));
      expect(answers[0].text).toContain('Rendered on first request.');
      expect(renderId(answers[1])).toBe(renderId(answers[0]));
      return answers;
    },
    nextStart([first, second]) {
      expectNextPage(first, 'MISS', ISR_CACHE_CONTROL);
      expectNextPage(second, 'HIT', ISR_CACHE_CONTROL);
    },
  },
  {
    name: 'the other pages answer 200 with HTML: prerendered posts, the form, the gallery',
    async viewer({ url }) {
      const paths = ['/posts/hello', '/posts/world', '/form', '/gallery'];
      const answers = await Promise.all(paths.map((path) => ask(`${url}${path}`)));
      answers.forEach((answer) => expectPage(answer));
      // next/image asks the optimizer for these widths at q=75 (the only quality allowed).
      expect(answers[3]?.text).toContain('/_next/image?url=%2Fphoto.png&amp;w=256&amp;q=75 1x');
      return answers;
    },
    nextStart(answers) {
      answers.forEach((answer, i) =>
        expectNextPage(answer, 'HIT', i < 2 ? ISR_CACHE_CONTROL : STATIC_CACHE_CONTROL),
      );
    },
  },
  {
    name: 'notFound() in an ISR route answers 404 with HTML',
    viewer: async ({ url }) => [await ask(`${url}/posts/missing`)].map(expectStatus(404, HTML)),
    // Next keeps a notFound() page like the page it stands for: the 404 is cacheable.
    nextStart: ([answer]) => expectNextPage(answer, 'MISS', ISR_CACHE_CONTROL),
  },
  {
    name: 'an unknown URL answers 404 with HTML',
    viewer: async ({ url }) => [await ask(`${url}/no-such-page`)].map(expectStatus(404, HTML)),
    nextStart: ([answer]) => expectNextPage(answer, 'HIT', DYNAMIC_CACHE_CONTROL),
  },
  {
    name: 'redirect() in a page answers 307 with its Location',
    async viewer({ url }) {
      const answer = await ask(`${url}/old`);
      expect(answer.status).toBe(307);
      expect(header(answer, 'location')).toBe('/isr');
      return [answer];
    },
    nextStart: ([answer]) => expectNextPage(answer, 'HIT', STATIC_CACHE_CONTROL),
  },
  {
    name: 'a trailing slash is redirected (308) to the path without it',
    async viewer({ url }) {
      const answer = await ask(`${url}/isr/`);
      expect(answer.status).toBe(308);
      expect(header(answer, 'location')).toBe('/isr');
      return [answer];
    },
  },
  {
    name: 'a dynamic page renders each request with its cookies and query',
    async viewer({ url }) {
      const answers = await twice(`${url}/dynamic?q=hello`, {
        headers: { cookie: 'fixture-name=ann' },
      });
      answers.forEach((answer) => expectPage(answer));
      expect(answers[0].text).toContain('q=hello');
      expect(answers[0].text).toContain('name=ann');
      expect(renderId(answers[1])).not.toBe(renderId(answers[0]));
      return answers;
    },
    nextStart: ([answer]) => expectNextPage(answer, null, DYNAMIC_CACHE_CONTROL),
  },
  {
    name: 'a route handler runs on every GET (a counter) and sends no Cache-Control',
    async viewer({ url }) {
      const answers = await twice(`${url}/api/counter`);
      const [first, second] = answers.map((answer) => {
        expect(answer.status).toBe(200);
        expect(header(answer, 'content-type')).toBe('application/json');
        return (JSON.parse(answer.text) as { count: number }).count;
      });
      expect(second).toBe(first + 1);
      return answers;
    },
    nextStart: ([answer]) => expect(header(answer, 'cache-control')).toBeNull(),
  },
  {
    name: 'an ISR route handler (revalidate = 3600) answers from one run',
    async viewer({ url }) {
      const answers = await twice(`${url}/feed.json`);
      answers.forEach(expectStatus(200, 'application/json'));
      expect(answers[1].text).toBe(answers[0].text);
      return answers;
    },
    nextStart: ([first]) => expectNextPage(first, 'HIT', ISR_CACHE_CONTROL),
  },
  ...rscCases(),
];

function expectStatus(status: number, contentType: string) {
  return (answer: Answer): Answer => {
    expect(answer.status).toBe(status);
    expect(header(answer, 'content-type')).toBe(contentType);
    return answer;
  };
}

function rscCases(): BaselineCase[] {
  return [
    {
      name: 'the RSC payload of an ISR page comes from the same render as its HTML',
      async viewer({ url }) {
        const html = await ask(`${url}/isr`);
        const rsc = await ask(rscUrl(url, '/isr', navigationHeaders()), {
          headers: { ...navigationHeaders() },
        });
        expectStatus(200, RSC)(rsc);
        expect(varyNames(rsc)).toEqual(expect.arrayContaining(NEXT_VARY.split(', ')));
        expect(renderId(rsc)).toBe(renderId(html));
        return [rsc];
      },
      nextStart: ([rsc]) => expectNextPage(rsc, 'HIT', ISR_CACHE_CONTROL),
    },
    {
      name: "a prefetch of a route's tree is a small RSC payload without the page",
      async viewer({ url }) {
        const html = await ask(`${url}/isr`);
        const tree = await ask(rscUrl(url, '/isr', treePrefetchHeaders()), {
          headers: { ...treePrefetchHeaders() },
        });
        expectStatus(200, RSC)(tree);
        expect(tree.body.length).toBeLessThan(html.body.length / 4);
        expect(renderId(tree)).toBeUndefined();
        return [tree];
      },
      nextStart([tree]) {
        expectNextPage(tree, 'HIT', ISR_CACHE_CONTROL);
        expect(header(tree, 'x-nextjs-postponed')).toBe('2');
      },
    },
    {
      name: 'a segment prefetch answers that segment of the same render',
      async viewer({ url }) {
        const html = await ask(`${url}/isr`);
        const headers = segmentPrefetchHeaders('/isr/__PAGE__');
        const segment = await ask(rscUrl(url, '/isr', headers), { headers: { ...headers } });
        expectStatus(200, RSC)(segment);
        expect(renderId(segment)).toBe(renderId(html));
        return [segment];
      },
      nextStart: ([segment]) => expectNextPage(segment, 'HIT', ISR_CACHE_CONTROL),
    },
    {
      name: 'a prefetch of a segment the page does not have answers 404, empty',
      async viewer({ url }) {
        const headers = segmentPrefetchHeaders('/no-such/__PAGE__');
        const answer = await ask(rscUrl(url, '/isr', headers), { headers: { ...headers } });
        expect(answer.status).toBe(404);
        expect(answer.body.length).toBe(0);
        return [answer];
      },
      // The empty 404 carries the page's s-maxage: a cache in front must not keep it.
      nextStart: ([answer]) => expect(header(answer, 'cache-control')).toBe(ISR_CACHE_CONTROL),
    },
  ];
}

export const assetCases: readonly BaselineCase[] = [
  {
    name: 'the image optimizer picks the format from Accept and says Vary: Accept',
    async viewer({ url }) {
      const image = `${url}/_next/image?url=%2Fphoto.png&w=256&q=75`;
      const webp = await ask(image, { headers: { accept: 'image/avif,image/webp,*/*' } });
      const png = await ask(image, { headers: { accept: '*/*' } });
      const badWidth = await ask(`${url}/_next/image?url=%2Fphoto.png&w=123&q=75`);
      expectStatus(200, 'image/webp')(webp);
      expectStatus(200, 'image/png')(png);
      expect([header(webp, 'vary'), header(png, 'vary')]).toEqual(['Accept', 'Accept']);
      expect(badWidth.status).toBe(400);
      return [webp, png, badWidth];
    },
    nextStart(answers) {
      for (const answer of answers.slice(0, 2)) {
        expect(header(answer, 'cache-control')).toBe('public, max-age=14400, must-revalidate');
        expect(header(answer, 'content-security-policy')).toContain('sandbox');
      }
      expect(header(answers[2], 'cache-control')).toBeNull();
    },
  },
  {
    name: 'build assets under /_next/static are immutable; a missing one is a 404',
    async viewer({ url }) {
      const paths = staticAssetPaths((await ask(`${url}/`)).text);
      const script = await ask(`${url}${paths.find((path) => path.endsWith('.js'))}`);
      const font = await ask(`${url}${paths.find((path) => path.endsWith('.ttf'))}`);
      const missing = await ask(`${url}/_next/static/chunks/missing.js`);
      expectStatus(200, 'application/javascript; charset=UTF-8')(script);
      expectStatus(200, 'font/ttf')(font);
      for (const answer of [script, font]) expect(header(answer, 'cache-control')).toBe(IMMUTABLE);
      expect(missing.status).toBe(404);
      return [script, font, missing];
    },
    nextStart: (answers) => expect(header(answers[2], 'cache-control')).toBe(DYNAMIC_CACHE_CONTROL),
  },
  {
    name: 'files from public/ are served as they are',
    async viewer({ url }) {
      const text = await ask(`${url}/hello.txt`);
      const png = await ask(`${url}/photo.png`);
      expectStatus(200, 'text/plain; charset=UTF-8')(text);
      expect(text.text).toBe('A public file: served from public/ by next start.\n');
      expectStatus(200, 'image/png')(png);
      return [text, png];
    },
    nextStart(answers) {
      for (const answer of answers) {
        expect(header(answer, 'cache-control')).toBe('public, max-age=0');
        expect(header(answer, 'last-modified')).not.toBeNull();
      }
    },
  },
];
