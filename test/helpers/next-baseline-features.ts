/**
 * The fixture's cases of what real apps use besides pages (issue 34): an edge middleware that
 * builds URLs from the Host, `headers()` in next.config.js, `dynamicParams = false`, a
 * `loading.jsx` streamed ahead of its page, and `after()`. Under `next start` alone, each is the
 * baseline a cache in front must reproduce (or document where it differs).
 */
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import { HTML, ISR_CACHE_CONTROL } from './next-baseline-pages.js';
import { ask, askUntil, eventually, renderId, type Answer } from './next-http.js';
import type { BaselineCase } from './next-baseline.js';

const header = (answer: Answer | undefined, name: string) => answer?.headers.get(name) ?? null;

/** The host a viewer of `url` asked for, as Next's middleware reads it (loopback as localhost). */
export function middlewareHostOf(url: string): string {
  const { hostname, port } = new URL(url);
  const host = /^(127\.\d+\.\d+\.\d+|\[::1\])$/.test(hostname) ? 'localhost' : hostname;
  return port === '' ? host : `${host}:${port}`;
}

export const LOADING_TEXT = 'Loading the streamed content';
export const STREAMED_TEXT = 'content after the gate';

export const featureCases: readonly BaselineCase[] = [
  {
    name: 'edge middleware: a redirect built from the Host names the host the viewer asked for',
    async viewer({ url }) {
      const answer = await ask(`${url}/mw/redirect`);
      expect(answer.status).toBe(307);
      expect(header(answer, 'location')).toBe(`https://${middlewareHostOf(url)}/isr`);
      return [answer];
    },
  },
  {
    name: 'edge middleware: a rewrite built from the Host answers the page it names',
    async viewer({ url }) {
      const answer = await ask(`${url}/mw/rewrite`);
      expect([answer.status, header(answer, 'content-type')]).toEqual([200, HTML]);
      expect(answer.text).toContain('The first post.');
      return [answer];
    },
  },
  {
    name: 'a header from next.config.js headers() and one from the edge middleware reach the viewer',
    async viewer({ url }) {
      const answer = await ask(`${url}/headers`);
      expect([answer.status, header(answer, 'content-type')]).toEqual([200, HTML]);
      expect(header(answer, 'x-fixture-config')).toBe('headers()');
      expect(header(answer, 'x-fixture-middleware')).toBe('edge');
      return [answer];
    },
    nextStart: ([answer]) => expect(header(answer, 'cache-control')).toBe(ISR_CACHE_CONTROL),
  },
  {
    name: 'dynamicParams = false: the prerendered params answer 200, any other 404',
    async viewer({ url }) {
      const answers = [
        await ask(`${url}/fixed/a`),
        await ask(`${url}/fixed/a`),
        await ask(`${url}/fixed/b`),
        await ask(`${url}/fixed/c`),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 404]);
      expect(answers.map((answer) => header(answer, 'content-type'))).toEqual(Array(4).fill(HTML));
      expect(answers[0]?.text).toContain('Fixed a');
      expect(renderId(answers[1])).toBe(renderId(answers[0]));
      return answers;
    },
    nextStart: ([first]) => expect(header(first, 'x-nextjs-cache')).toBe('HIT'),
  },
  {
    name: "loading.jsx is sent before the page's content, which follows in the same answer",
    async viewer({ url }) {
      const gate = randomUUID();
      const answer = await askUntil(`${url}/streaming`, LOADING_TEXT, { 'x-fixture-gate': gate });
      expect([answer.status, answer.headers.get('content-type')]).toEqual([200, HTML]);
      expect(answer.head).toContain(LOADING_TEXT);
      expect(answer.head).not.toContain(STREAMED_TEXT);
      const opened = await ask(`${url}/api/gate?id=${gate}`, { method: 'POST' });
      expect(opened.status).toBe(200);
      expect(await answer.rest()).toContain(`${STREAMED_TEXT} (by a request)`);
      return [opened];
    },
  },
  {
    name: 'after() runs its work once the answer is sent',
    async viewer({ url }) {
      const id = randomUUID();
      const scheduled = await ask(`${url}/api/after?id=${id}`);
      expect(scheduled.status).toBe(200);
      expect(JSON.parse(scheduled.text)).toEqual({ scheduled: id });
      const log = await eventually(
        () => ask(`${url}/api/after`),
        (answer) => (JSON.parse(answer.text) as { runs: string[] }).runs.includes(id),
      );
      return [scheduled, log];
    },
  },
];
