import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Guard } from '../../../lambda/adapters/shared/dynamodb/conditions.js';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { TestClock } from '../../helpers/clock.js';
import { removeGuard } from '../../helpers/guard-mutation.js';
import { createOriginHarness, type OriginHarness } from '../../helpers/origin-harness.js';
import { countingRenderer, sleep } from '../../helpers/renderers.js';

/** Renders take 300 ms; the renderer counts how many run at once. */
let running = 0;
let mostAtOnce = 0;
const counter = countingRenderer(async (request) => {
  running += 1;
  mostAtOnce = Math.max(mostAtOnce, running);
  await sleep(300);
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

/** Eight viewers ask for eight new pages at the same moment. */
async function rush() {
  mostAtOnce = 0;
  const round = ++rushes;
  const replies = await Promise.all(
    Array.from({ length: 8 }, (_, i) => h.invoke(`/rush-${round}-${i}`)),
  );
  return {
    mostAtOnce,
    rendered: replies.filter((reply) => reply.status === 200).length,
    overloaded: replies.filter(
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
    expect(result.rendered + result.overloaded).toBe(8);
    // the slots were freed: the next page renders
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
