import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DeadLetterAttribute } from '../../../lambda/adapters/dead-letter-queue/sqs.js';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { TestClock } from '../../helpers/clock.js';
import { countingRenderer } from '../../helpers/renderers.js';
import {
  createWorkerHarness,
  intentFor,
  type WorkerHarness,
} from '../../helpers/worker-harness.js';

const counter = countingRenderer((request) => {
  if (request.cacheKey.path.startsWith('/fails')) return htmlPage('upstream down', { status: 503 });
  if (request.cacheKey.path.startsWith('/private')) {
    return { ...htmlPage('per viewer'), headers: { 'cache-control': 'private, no-store' } };
  }
  return htmlPage(`<p>${request.cacheKey.key}</p>`);
});
let h: WorkerHarness;

beforeAll(async () => {
  h = await createWorkerHarness({
    renderer: counter.renderer,
    clock: new TestClock(),
    env: { ISR_MAX_RECEIVE_COUNT: '2' },
  });
});
afterAll(() => h.destroy());

const attribute = (
  letter: { MessageAttributes?: Record<string, { StringValue?: string }> },
  name: string,
) => letter.MessageAttributes?.[name]?.StringValue;

describe('worker handler on a real queue', () => {
  it('retries only the failing record, dead-letters the poison with its reason, publishes the good one', async () => {
    const poisonId = await h.send('{"v":1,"path":');
    const traversalId = await h.send(intentFor('/a/../../etc/passwd'));
    const failingId = await h.send(intentFor('/fails'));
    await h.send(intentFor('/good'));

    const result = await h.poll(4);
    expect(result.received).toBe(4);
    expect(result.failed).toEqual([failingId]);

    const letters = await h.deadLetters();
    expect(
      letters.map((letter) => attribute(letter, DeadLetterAttribute.SourceMessageId)).sort(),
    ).toEqual([poisonId, traversalId].sort());
    const poison = letters.find((letter) => letter.Body === '{"v":1,"path":');
    expect(attribute(poison ?? {}, DeadLetterAttribute.Code)).toBe('invalid-message');
    expect(attribute(poison ?? {}, DeadLetterAttribute.Message)).toMatch(/not JSON/);
    const traversal = letters.find((letter) => letter !== poison);
    expect(attribute(traversal ?? {}, DeadLetterAttribute.Code)).toBe(
      'invalid-cache-key:traversal',
    );

    expect(await h.cacheTable.getMeta(h.keyFor('/good').pk, { consistent: true })).toBeDefined();
    expect(await h.cacheTable.getMeta(h.keyFor('/fails').pk, { consistent: true })).toBeUndefined();

    // Only the failing record comes back, and only once its visibility timeout has passed ...
    expect((await h.poll(4)).received).toBe(0);
    await h.expireVisibility();
    const second = await h.poll(4);
    expect(second.received).toBe(1);
    expect(second.failed).toEqual([]);
    // ... and on its last allowed receive it is dead-lettered with the reason, never looping.
    const exhausted = await h.deadLetters();
    expect(exhausted).toHaveLength(1);
    expect(attribute(exhausted[0] ?? {}, DeadLetterAttribute.SourceMessageId)).toBe(failingId);
    expect(attribute(exhausted[0] ?? {}, DeadLetterAttribute.Code)).toBe('retries-exhausted');
    expect(attribute(exhausted[0] ?? {}, DeadLetterAttribute.Message)).toMatch(
      /renderer answered 503/,
    );
    expect(attribute(exhausted[0] ?? {}, DeadLetterAttribute.ReceiveCount)).toBe('2');

    await h.expireVisibility();
    expect((await h.poll(4)).received).toBe(0);
    expect(counter.callsFor('/fails')).toBe(2);
    expect(counter.callsFor('/good')).toBe(1);
  });

  it('dead-letters a refused page on its first receive with its own reason, rendering it once', async () => {
    const refusedId = await h.send(intentFor('/private'));
    const result = await h.poll(1);
    expect(result).toMatchObject({ received: 1, failed: [] });
    const letters = await h.deadLetters();
    expect(letters).toHaveLength(1);
    expect(attribute(letters[0] ?? {}, DeadLetterAttribute.SourceMessageId)).toBe(refusedId);
    expect(attribute(letters[0] ?? {}, DeadLetterAttribute.Code)).toBe('refused:uncacheable');
    expect(attribute(letters[0] ?? {}, DeadLetterAttribute.ReceiveCount)).toBe('1');
    const req = await h.row(h.keyFor('/private').pk, `REQ#${refusedId}`);
    expect(req).toMatchObject({
      status: { S: 'FAILED' },
      error_code: { S: 'refused:uncacheable' },
    });

    await h.expireVisibility(); // past the visibility timeout: nothing comes back
    expect((await h.poll(1)).received).toBe(0);
    expect(counter.callsFor('/private')).toBe(1);
  });
});
