/**
 * Issue 22: without the `nextjs` preset, a request carrying Next's draft cookie is a plain page
 * request (the cookie is not a bypass), so two at once are a MISS and a waiter for its publish.
 * The waiter polls on the origin's clock for `missWaitMs`: on virtual time that nobody moved it
 * slept forever (the hang); its in-line waits must pass (`InlineTestClock`).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TestClock } from '../helpers/clock.js';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { BYPASS_COOKIE, DRAFT_SECRET } from '../helpers/next-baseline-flows.js';
import { startNextFront, type NextFront } from '../helpers/next-front.js';
import { ask, cookiePair, type Answer } from '../helpers/next-http.js';

const BUILD_TIMEOUT_MS = 300_000;

let app: NextApp;
let cookie: string;

beforeAll(async () => {
  app = await startNextApp();
  const enabled = await ask(`${app.url}/api/draft?secret=${DRAFT_SECRET}&slug=hello`);
  cookie = cookiePair(enabled, BYPASS_COOKIE)!;
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await app?.stop();
});

/** Two requests for `path` at once, carrying the draft cookie. */
const twoAtOnce = (front: NextFront, path: string): Promise<Answer>[] =>
  [1, 2].map(() => ask(`${front.front.url}${path}`, { headers: { cookie } }));

/** A 200, or the waiter's 503 with Retry-After: an answer, whatever it is. */
const answered = (answer: Answer) =>
  answer.status === 200 || (answer.status === 503 && answer.headers.has('retry-after'));

describe('the draft cookie without the preset', () => {
  it('two requests at once carrying it are both answered, the published page at least once', async () => {
    const plain = await startNextFront(app.url, {});
    try {
      const answers = await Promise.all(twoAtOnce(plain, '/posts/hello'));
      expect(answers.every(answered)).toBe(true);
      expect(answers.some((answer) => answer.text.includes('The first post.'))).toBe(true);
      // The cookie is not a bypass here: no request carried the draft to a viewer.
      expect(answers.some((answer) => answer.text.includes('Hello, draft edition.'))).toBe(false);
    } finally {
      await plain.front.close();
    }
  });

  it('control: on a clock nobody moves, the waiter is still asleep after the first answer', async () => {
    const clock = new TestClock();
    const plain = await startNextFront(app.url, {}, { clock });
    try {
      const [first, second] = twoAtOnce(plain, '/posts/hello');
      const winner = await Promise.race([first, second]);
      expect(winner.status).toBe(200);
      await clock.whenSleeping(1); // the waiter, polling for the publish it already missed
      clock.advance(1); // past missWaitMs: now it answers
      expect((await Promise.all([first, second])).every(answered)).toBe(true);
    } finally {
      await plain.front.close();
    }
  });
});
