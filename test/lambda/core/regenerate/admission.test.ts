import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';
import { createOriginHarness, type OriginHarness } from '../../../helpers/origin-harness.js';
import { countingRenderer, gate } from '../../../helpers/renderers.js';

const VIEWERS = 8;

/**
 * Renders hold until the test lets them go: every render the cap admits is running at the same
 * moment, by construction rather than by a render long enough to overlap on the wall clock.
 */
let running = 0;
let mostAtOnce = 0;
let released = gate();
let everyoneSettled = gate();
let settled = 0;
const checkSettled = () => {
  if (running + settled === VIEWERS) everyoneSettled.open();
};
const counter = countingRenderer(async (request) => {
  running += 1;
  mostAtOnce = Math.max(mostAtOnce, running);
  checkSettled();
  await released.wait();
  running -= 1;
  return htmlPage(`<p>${request.cacheKey.key}</p>`);
});
let h: OriginHarness;
let rushes = 0;

beforeAll(async () => {
  h = await createOriginHarness({
    renderer: counter.renderer,
    clock: new TestClock(),
    env: { ISR_MISS_RENDER_LIMIT: '2' },
  });
});
afterAll(() => h.destroy());

/**
 * Eight viewers ask for eight new pages at once. Once each of them is either rendering or
 * answered, the renders are let go.
 */
async function rush() {
  mostAtOnce = 0;
  settled = 0;
  released = gate();
  everyoneSettled = gate();
  const round = ++rushes;
  const replies = Array.from({ length: VIEWERS }, (_, i) =>
    h.invoke(`/rush-${round}-${i}`).finally(() => {
      settled += 1;
      checkSettled();
    }),
  );
  await everyoneSettled.wait();
  const atOnce = mostAtOnce;
  const answeredWhileRendering = settled;
  released.open();
  const answers = await Promise.all(replies);
  return {
    mostAtOnce: atOnce,
    answeredWhileRendering,
    rendered: answers.filter((reply) => reply.status === 200).length,
    overloaded: answers.filter(
      (reply) =>
        reply.status === 503 &&
        (JSON.parse(reply.text ?? '{}') as { error?: string }).error === 'overloaded',
    ).length,
  };
}

describe('MISS admission on DynamoDB Local', () => {
  it('never renders more pages at once than the cap; the rest get 503 overloaded at once', async () => {
    const result = await rush();
    expect(result.mostAtOnce).toBeLessThanOrEqual(2);
    expect(result.rendered).toBeGreaterThanOrEqual(1);
    expect(result.rendered + result.overloaded).toBe(VIEWERS);
    // Those refused were answered while the admitted renders still held their slots.
    expect(result.answeredWhileRendering).toBe(result.overloaded);
    // the slots were freed: the next page renders
    released.open();
    expect((await h.invoke(`/after-${rushes}`)).status).toBe(200);
  });

  it('negative control: without the free-slot condition, every viewer renders at once', async () => {
    const restore = removeGuard(h.clients.dynamodb, Guard.leaseFree);
    try {
      const result = await rush();
      expect(result.mostAtOnce).toBeGreaterThan(2);
    } finally {
      restore();
    }
  });
});
