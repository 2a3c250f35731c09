/**
 * The data cache's invariant on the clock port: a regeneration that follows a revalidation never
 * renders with data cached before it, on any instance. The real revalidate function (on DynamoDB
 * Local) writes the tag's time, waits out cached reads (250 ms, which moves the test clock), then
 * answers 202; an instance's TagTimes reads those times through the same function, on the same
 * clock. Each guard has its control: a read reused longer than the 202 waits, a 202 that does not
 * wait, a render the service asks for that trusts an earlier read.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TagTimes, type ServiceTagTimes } from '../../next/tag-times.js';
import { TestClock } from '../helpers/clock.js';
import { countingRenderer } from '../helpers/renderers.js';
import { htmlPage } from '../../lambda/adapters/renderer/module.js';
import { createOriginHarness, type OriginHarness } from '../helpers/origin-harness.js';
import { recordingCdn } from '../helpers/revalidate.js';
import { createRevalidateHarness } from '../helpers/revalidate-harness.js';

let clock: TestClock;
let h: OriginHarness;
let keys = 0;

beforeAll(async () => {
  clock = new TestClock();
  const { renderer } = countingRenderer(() => htmlPage('<p>page</p>'));
  h = await createOriginHarness({ renderer, clock });
});
afterAll(() => h?.destroy());

/** The revalidate function as configured (`ISR_IN_PROGRESS_CACHE_MS`), and a Next instance's TagTimes over it. */
function service(env: Record<string, string> = {}, reuseMs?: number) {
  const rv = createRevalidateHarness(h, { cdn: recordingCdn(), env });
  const tagTimes = new TagTimes({
    now: () => clock.now(),
    read: async (tags) => {
      const reply = await rv.post({ tags }, { target: '/_isr/revalidate/tag-times' });
      if (reply.statusCode !== 200) throw new Error(`tag times: ${reply.statusCode}`);
      return reply.json as unknown as ServiceTagTimes;
    },
    ...(reuseMs === undefined ? {} : { reuseMs }),
  });
  /** The app's revalidateTag reaching the service: resolves with its 202, after its wait. */
  const revalidate = async (tag: string) => {
    const reply = await rv.post({ tags: [tag], mode: 'stale' }, { key: `k-${++keys}` });
    expect(reply.statusCode).toBe(202);
  };
  return { tagTimes, revalidate };
}

/**
 * An entry made, the instance's read of its tag (kept for reuse), 100 ms later a revalidation of
 * the tag (a tag without pages) through the service configured by `env`, then, optionally, a
 * render the service asks for arriving: is the entry still trusted?
 */
async function trustedAfterRevalidation(
  env: Record<string, string>,
  options: { reuseMs?: number; renderArrives?: boolean } = {},
): Promise<boolean> {
  const tag = `data-${++keys}`;
  const { tagTimes, revalidate } = service(env, options.reuseMs);
  const madeAt = clock.now();
  clock.advanceMs(10);
  expect(await tagTimes.isCurrent([tag], madeAt)).toBe(true);
  clock.advanceMs(100);
  await revalidate(tag);
  if (options.renderArrives === true) tagTimes.requireFreshReads(); // x-isr-regeneration
  return tagTimes.isCurrent([tag], madeAt);
}

/** The service answering its 202 at once, not waiting out reads. */
const NO_WAIT = { ISR_IN_PROGRESS_CACHE_MS: '0' };

describe('a data cache entry made before a revalidation', () => {
  it('is stale for every request that starts after the 202, though the instance read tag times just before', async () => {
    expect(await trustedAfterRevalidation({})).toBe(false);
  });

  it('control: an instance reusing its read longer than the 202 waits trusts the stale entry', async () => {
    expect(await trustedAfterRevalidation({}, { reuseMs: 1_000 })).toBe(true);
  });

  it('control: a 202 that does not wait out reads leaves an instance trusting it', async () => {
    expect(await trustedAfterRevalidation(NO_WAIT, { reuseMs: 250 })).toBe(true);
  });

  it('is stale for a regeneration the revalidation queued before its 202 (it trusts no earlier read)', async () => {
    // No wait at all: the regeneration may start the moment the tag's time is written.
    expect(await trustedAfterRevalidation(NO_WAIT, { reuseMs: 250, renderArrives: true })).toBe(
      false,
    );
  });
});
