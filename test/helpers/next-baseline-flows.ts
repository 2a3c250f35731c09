/**
 * The fixture app's flows over several requests: draft mode, Server Actions (a form without
 * JavaScript and the client router's Next-Action call) and on-demand revalidation.
 */
import { expect } from '@jest/globals';
import { DYNAMIC_CACHE_CONTROL, HTML, ISR_CACHE_CONTROL, RSC } from './next-baseline-pages.js';
import { ask, cookiePair, eventually, formActionIds, renderId, type Answer } from './next-http.js';
import type { BaselineCase } from './next-baseline.js';

/** The draft secret the fixture's /api/draft expects unless FIXTURE_DRAFT_SECRET says another. */
export const DRAFT_SECRET = 'fixture-draft-secret';
export const BYPASS_COOKIE = '__prerender_bypass';
const ACTION_CACHE_CONTROL = 'no-cache, no-store, max-age=0, must-revalidate';

const header = (answer: Answer | undefined, name: string) => answer?.headers.get(name) ?? null;

/** A Server Action's id, read from the page's form as a browser without JavaScript would. */
async function actionId(url: string, formId: string): Promise<string> {
  const id = formActionIds((await ask(`${url}/form`)).text).get(formId);
  if (id === undefined) throw new Error(`no Server Action form #${formId} on /form`);
  return id;
}

const isrRender = async (url: string) => renderId(await ask(`${url}/isr`));

export const flowCases: readonly BaselineCase[] = [
  {
    name: 'draft mode: /api/draft checks its secret, sets the bypass cookie, shows drafts',
    async viewer({ url }) {
      const refused = await ask(`${url}/api/draft?secret=wrong&slug=hello`);
      const enabled = await ask(`${url}/api/draft?secret=${DRAFT_SECRET}&slug=hello`);
      const cookie = cookiePair(enabled, BYPASS_COOKIE);
      expect(refused.status).toBe(401);
      expect(enabled.status).toBe(307);
      expect(header(enabled, 'location')).toBe('/posts/hello');
      expect(enabled.cookies[0]).toMatch(/; Path=\/; Secure; HttpOnly; SameSite=none$/);
      const drafts = [
        await ask(`${url}/posts/hello`, { headers: { cookie: cookie ?? '' } }),
        await ask(`${url}/posts/hello`, { headers: { cookie: cookie ?? '' } }),
      ];
      const published = await ask(`${url}/posts/hello`);
      for (const draft of drafts) {
        expect(draft.status).toBe(200);
        expect(draft.text).toContain('Hello, draft edition.');
      }
      expect(renderId(drafts[1])).not.toBe(renderId(drafts[0])); // never from a cache
      expect(published.text).toContain('The first post.');
      expect(published.text).not.toContain('Draft mode is on');
      return [enabled, ...drafts, published];
    },
    nextStart([enabled, draft, , published]) {
      expect(header(draft, 'cache-control')).toBe(DYNAMIC_CACHE_CONTROL);
      expect(header(published, 'cache-control')).toBe(ISR_CACHE_CONTROL);
      // The cookie's value is the build's preview id: the x-prerender-revalidate secret.
      expect(enabled?.cookies[0]).toMatch(/^__prerender_bypass=[0-9a-f]{32};/);
    },
  },
  {
    name: 'a Server Action form posted without JavaScript sets a cookie and redirects (303)',
    async viewer({ url }) {
      const form = new FormData();
      form.set(`$ACTION_ID_${await actionId(url, 'save-name')}`, '');
      form.set('name', 'alice');
      const posted = await ask(`${url}/form`, {
        method: 'POST',
        headers: { origin: url },
        body: form,
      });
      expect(posted.status).toBe(303);
      expect(header(posted, 'location')).toBe('/dynamic');
      expect(posted.cookies).toEqual(['fixture-name=alice; Path=/; HttpOnly; SameSite=lax']);
      const page = await ask(`${url}/dynamic`, { headers: { cookie: 'fixture-name=alice' } });
      expect(page.text).toContain('name=alice');
      return [posted];
    },
    nextStart: ([posted]) => expect(header(posted, 'cache-control')).toBe(ACTION_CACHE_CONTROL),
  },
  {
    name: 'a Server Action called by the client router (Next-Action) runs updateTag and redirects',
    async viewer({ url }) {
      const before = await isrRender(url);
      const called = await ask(`${url}/form`, {
        method: 'POST',
        headers: {
          origin: url,
          accept: RSC,
          'next-action': await actionId(url, 'expire-posts'),
          'content-type': 'text/plain;charset=UTF-8',
        },
        body: '[]',
      });
      expect(called.status).toBe(200);
      expect(header(called, 'content-type')).toBe(RSC);
      expect(header(called, 'x-action-redirect')).toBe('/isr;push');
      expect(header(called, 'x-action-revalidated')).toBe('1');
      expect(await isrRender(url)).not.toBe(before); // updateTag expires at once
      return [called];
    },
    // The answer is the redirect target's RSC payload with that page's s-maxage: a POST answer
    // a cache in front must never keep, whatever its Cache-Control says.
    nextStart: ([called]) => expect(header(called, 'cache-control')).toBe(ISR_CACHE_CONTROL),
  },
  {
    name: "revalidateTag('posts', 'max') serves the old page once, then a new render",
    async viewer({ url }) {
      const before = await ask(`${url}/isr`);
      const revalidated = await ask(`${url}/api/revalidate?tag=posts`, { method: 'POST' });
      const stale = await ask(`${url}/isr`);
      const fresh = await eventually(
        () => ask(`${url}/isr`),
        (answer) => renderId(answer) !== renderId(before),
      );
      expect(revalidated.status).toBe(200);
      expect(renderId(stale)).toBe(renderId(before));
      expect(fresh.status).toBe(200);
      expect(header(fresh, 'content-type')).toBe(HTML);
      return [stale, fresh];
    },
    nextStart([stale, fresh]) {
      expect(header(stale, 'x-nextjs-cache')).toBe('STALE');
      expect(header(fresh, 'x-nextjs-cache')).toBe('HIT');
    },
  },
  {
    name: "revalidateTag('posts', { expire: 0 }) renders the next request afresh",
    async viewer({ url }) {
      const before = await isrRender(url);
      await ask(`${url}/api/revalidate?tag=posts&expire=1`, { method: 'POST' });
      const after = await ask(`${url}/isr`);
      expect(renderId(after)).not.toBe(before);
      return [after];
    },
    nextStart: ([after]) => expect(header(after, 'x-nextjs-cache')).toBe('MISS'),
  },
  {
    name: "revalidatePath('/isr') renders the next request afresh",
    async viewer({ url }) {
      const before = await isrRender(url);
      await ask(`${url}/api/revalidate?path=/isr`, { method: 'POST' });
      const after = await ask(`${url}/isr`);
      expect(renderId(after)).not.toBe(before);
      return [after];
    },
    nextStart: ([after]) => expect(header(after, 'x-nextjs-cache')).toBe('MISS'),
  },
];
