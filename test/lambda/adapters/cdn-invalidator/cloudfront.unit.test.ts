import {
  CloudFrontClient,
  CreateInvalidationCommand,
  InvalidArgument,
  TooManyInvalidationsInProgress,
  type CreateInvalidationCommandInput,
} from '@aws-sdk/client-cloudfront';
import { afterEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import {
  CloudFrontInvalidator,
  type CloudFrontInvalidatorOptions,
} from '../../../../lambda/adapters/cdn-invalidator/cloudfront.js';
import { purgeIdOf } from '../../../../lambda/core/cdn-purge.js';
import { retryPendingPurges } from '../../../../lambda/core/operate/pending-purges.js';
import { CdnPurgeRejectedError } from '../../../../lambda/core/errors.js';
import { TestClock } from '../../../helpers/clock.js';
import { InMemoryPendingPurges } from '../../../../lambda/adapters/pending-purges/memory.js';

// No local CloudFront exists: the adapter is driven through a mocked client.
const client = new CloudFrontClient({ region: 'us-east-1' });
const cloudfront = mockClient(client);
afterEach(() => {
  cloudfront.reset();
});

const throttled = () =>
  new TooManyInvalidationsInProgress({ message: 'too many in progress', $metadata: {} });

/** An invalidator whose waits advance a test clock instead of passing real time. */
function setup(options: Partial<CloudFrontInvalidatorOptions> = {}) {
  const clock = new TestClock(undefined, { autoAdvance: true });
  const pending = new InMemoryPendingPurges();
  const slept = clock.slept;
  const logged: { message: string; extra: Record<string, unknown> }[] = [];
  const log = (message: string, extra: Record<string, unknown>) => {
    logged.push({ message, extra });
  };
  const invalidator = new CloudFrontInvalidator({
    client,
    distributionId: 'E2EXAMPLE',
    pending,
    clock,
    logger: { info: log, warn: log },
    random: () => 0.5,
    ...options,
  });
  return { invalidator, pending, slept, logged, clock };
}

let created = 0;
/** CloudFront's answer: a new invalidation id per request. */
const acceptAll = () => {
  cloudfront.on(CreateInvalidationCommand).callsFake(() => {
    created += 1;
    return Promise.resolve({ Invalidation: { Id: `I${created}`, Status: 'InProgress' } });
  });
};

const inputs = (): CreateInvalidationCommandInput[] =>
  cloudfront.commandCalls(CreateInvalidationCommand).map((call) => call.args[0].input);
const itemsOf = (input: CreateInvalidationCommandInput) =>
  input.InvalidationBatch?.Paths?.Items ?? [];
const referenceOf = (input: CreateInvalidationCommandInput) =>
  input.InvalidationBatch?.CallerReference;

const manyTags = (count: number) =>
  Array.from({ length: count }, (_, index) => `t/${String(index).padStart(5, '0')}`);

describe('CloudFrontInvalidator request', () => {
  it('sends each tag once as a #item, to its distribution, under a deterministic reference', async () => {
    acceptAll();
    const { invalidator, logged } = setup();
    const purge = await invalidator.invalidateTags(['_/Post:42', '_/demo', '_/post:42'], {
      effectId: 'effect-1',
    });

    expect(inputs()).toHaveLength(1);
    const [input] = inputs();
    expect(input).toEqual({
      DistributionId: 'E2EXAMPLE',
      InvalidationBatch: {
        CallerReference: purgeIdOf(['_/demo', '_/post:42'], { effectIds: ['effect-1'] }),
        Paths: { Quantity: 2, Items: ['#_/demo', '#_/post:42'] },
      },
    });
    expect(purge).toEqual({ status: 'submitted', invalidationIds: [`I${created}`] });
    expect(logged).toContainEqual({
      message: 'cdn invalidation created',
      extra: expect.objectContaining({ invalidationId: `I${created}` }),
    });
  });

  it('repeats the reference for a retried effect, and never for purges without one', async () => {
    acceptAll();
    const { invalidator } = setup();
    await invalidator.invalidateTags(['a/x'], { effectId: 'e' });
    await invalidator.invalidateTags(['a/x'], { effectId: 'e' });
    await invalidator.invalidateTags(['a/x']);
    await invalidator.invalidateTags(['a/x']);

    const references = inputs().map(referenceOf);
    expect(references[0]).toBe(references[1]);
    expect(new Set(references).size).toBe(3);
  });

  it('splits a purge only past 3,000 items, and sends every tag', async () => {
    acceptAll();
    const { invalidator } = setup();
    const tags = manyTags(3001);
    const purge = await invalidator.invalidateTags(tags, { effectId: 'e' });

    expect(inputs().map((input) => itemsOf(input).length)).toEqual([3000, 1]);
    expect(inputs().flatMap(itemsOf).sort()).toEqual(tags.map((tag) => `#${tag}`).sort());
    expect(new Set(inputs().map(referenceOf)).size).toBe(2);
    expect(purge).toEqual({
      status: 'submitted',
      invalidationIds: [expect.any(String), expect.any(String)],
    });

    cloudfront.resetHistory();
    await invalidator.invalidateTags(manyTags(3000), { effectId: 'f' });
    expect(inputs()).toHaveLength(1);
  });

  it('refuses a tag CloudFront would refuse, before sending anything', async () => {
    acceptAll();
    const { invalidator } = setup();
    await expect(invalidator.invalidateTags(['a,b'])).rejects.toBeInstanceOf(CdnPurgeRejectedError);
    await expect(invalidator.invalidateTags(['x'.repeat(257)])).rejects.toBeInstanceOf(
      CdnPurgeRejectedError,
    );
    expect(inputs()).toHaveLength(0);
  });
});

describe('CloudFrontInvalidator coalescing', () => {
  it('makes one invalidation of the calls made within the window, each caller told its id', async () => {
    acceptAll();
    const { invalidator } = setup();
    const purges = await Promise.all([
      invalidator.invalidateTags(['a/1', 'a/2'], { effectId: 'e1' }),
      invalidator.invalidateTags(['a/2', 'a/3'], { effectId: 'e2' }),
      invalidator.invalidateTags(['a/4'], { effectId: 'e3' }),
    ]);

    expect(inputs()).toHaveLength(1);
    expect(itemsOf(inputs()[0])).toEqual(['#a/1', '#a/2', '#a/3', '#a/4']);
    expect(new Set(purges.map((purge) => JSON.stringify(purge))).size).toBe(1);
    expect(purges[0]).toEqual({ status: 'submitted', invalidationIds: [`I${created}`] });
  });

  it('opens a new invalidation for a call made after the window closed', async () => {
    acceptAll();
    const { invalidator } = setup();
    await invalidator.invalidateTags(['a/1']);
    await invalidator.invalidateTags(['a/2']);
    expect(inputs().map(itemsOf)).toEqual([['#a/1'], ['#a/2']]);
  });
});

describe('CloudFrontInvalidator throttling', () => {
  it('backs off with jitter and retries TooManyInvalidationsInProgress until it passes', async () => {
    cloudfront
      .on(CreateInvalidationCommand)
      .rejectsOnce(throttled())
      .rejectsOnce(throttled())
      .resolves({ Invalidation: { Id: 'I-late', Status: 'InProgress' } } as never);
    const { invalidator, slept, pending } = setup({ coalesceWindowMs: 0 });
    const purge = await invalidator.invalidateTags(['a/1'], { effectId: 'e' });

    expect(purge).toEqual({ status: 'submitted', invalidationIds: ['I-late'] });
    expect(inputs()).toHaveLength(3);
    expect(new Set(inputs().map(referenceOf)).size).toBe(1);
    // Window 0, then 500 ms and 1 s ceilings, each jittered to 75% by random() = 0.5.
    expect(slept).toEqual([0, 375, 750]);
    expect(pending.all).toEqual([]);
  });

  it('records the purge as pending when CloudFront stays saturated past the budget', async () => {
    cloudfront.on(CreateInvalidationCommand).rejects(throttled());
    const { invalidator, slept, pending, logged } = setup({ coalesceWindowMs: 0 });
    const purge = await invalidator.invalidateTags(['a/1', 'a/2'], { effectId: 'e' });

    expect(purge).toEqual({
      status: 'pending',
      reason: expect.stringContaining('TooManyInvalidationsInProgress') as unknown as string,
    });
    const waited = slept.reduce((sum, ms) => sum + ms, 0);
    expect(waited).toBeLessThanOrEqual(20_000);
    expect(pending.all).toEqual([
      expect.objectContaining({
        id: purgeIdOf(['a/1', 'a/2'], { effectIds: ['e'] }),
        tags: ['a/1', 'a/2'],
        attempts: inputs().length,
      }),
    ]);
    expect(logged.map((entry) => entry.message)).toContain('cdn purge pending');
  });

  it('drops no tag when one part is accepted and the other stays throttled', async () => {
    cloudfront
      .on(CreateInvalidationCommand)
      .resolvesOnce({ Invalidation: { Id: 'I-first', Status: 'InProgress' } } as never)
      .rejects(throttled());
    const { invalidator, pending } = setup({ maxTagsPerInvalidation: 2 });
    const tags = ['a/1', 'a/2', 'a/3', 'a/4', 'a/5'];
    const purge = await invalidator.invalidateTags(tags, { effectId: 'e' });

    expect(purge.status).toBe('pending');
    const sent = itemsOf(inputs()[0]).map((item) => item.slice(1));
    const kept = pending.all.flatMap((entry) => entry.tags);
    expect([...sent, ...kept].sort()).toEqual(tags);
  });

  it('retries a network error, but not a request CloudFront refuses for good', async () => {
    cloudfront
      .on(CreateInvalidationCommand)
      .rejectsOnce(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }))
      .resolves({ Invalidation: { Id: 'I-2', Status: 'InProgress' } } as never);
    const { invalidator } = setup();
    await expect(invalidator.invalidateTags(['a/1'])).resolves.toEqual({
      status: 'submitted',
      invalidationIds: ['I-2'],
    });

    cloudfront.reset();
    cloudfront
      .on(CreateInvalidationCommand)
      .rejects(new InvalidArgument({ message: 'bad item', $metadata: {} }));
    const second = setup();
    await expect(second.invalidator.invalidateTags(['a/1'])).rejects.toBeInstanceOf(
      CdnPurgeRejectedError,
    );
    expect(inputs()).toHaveLength(1);
    expect(second.pending.all).toEqual([]);
  });

  it('flushes a pending purge later under the same reference, then forgets it', async () => {
    cloudfront.on(CreateInvalidationCommand).rejects(throttled());
    const { invalidator, pending, clock } = setup();
    await invalidator.invalidateTags(['a/1'], { effectId: 'e' });
    const reference = referenceOf(inputs()[0]);

    cloudfront.reset();
    cloudfront
      .on(CreateInvalidationCommand)
      .resolves({ Invalidation: { Id: 'I-swept', Status: 'InProgress' } } as never);
    const sweep = await retryPendingPurges({ pending, cdn: invalidator, clock });

    expect(inputs().map(referenceOf)).toEqual([reference]);
    expect(sweep.submitted).toEqual([{ purgeId: reference, invalidationId: 'I-swept' }]);
    expect(pending.all).toEqual([]);
  });
});
