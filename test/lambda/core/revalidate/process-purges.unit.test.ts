/**
 * The purger's use case (`core/revalidate/process-purges.ts`) on one batch of the purge queue:
 * many pages in one CloudFront invalidation (the real adapter, CloudFront mocked), each tag once,
 * split at 3,000 items, a throttled purge kept pending, poison dead-lettered on its first receive
 * with its reason, a failure retried until the last receive.
 */
import {
  AccessDenied,
  CloudFrontClient,
  CreateInvalidationCommand,
  TooManyInvalidationsInProgress,
  type CreateInvalidationCommandInput,
} from '@aws-sdk/client-cloudfront';
import { afterEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { CloudFrontInvalidator } from '../../../../lambda/adapters/cdn-invalidator/cloudfront.js';
import { InMemoryPendingPurges } from '../../../../lambda/adapters/pending-purges/memory.js';
import type { CdnInvalidator, CdnPurge } from '../../../../lambda/core/page/ports.js';
import {
  processPurges,
  type PurgerMessage,
} from '../../../../lambda/core/revalidate/process-purges.js';
import { deadlinePurgesOf, softPurgeOf } from '../../../../lambda/core/revalidate/purge-message.js';
import { TestClock } from '../../../helpers/clock.js';

// No local CloudFront exists: the adapter is driven through a mocked client.
const client = new CloudFrontClient({ region: 'us-east-1' });
const cloudfront = mockClient(client);
afterEach(() => {
  cloudfront.reset();
});

let created = 0;
const acceptAll = () =>
  cloudfront.on(CreateInvalidationCommand).callsFake(() => {
    created += 1;
    return Promise.resolve({ Invalidation: { Id: `I${created}`, Status: 'InProgress' } });
  });
const inputs = (): CreateInvalidationCommandInput[] =>
  cloudfront.commandCalls(CreateInvalidationCommand).map((call) => call.args[0].input);
const itemsOf = (input: CreateInvalidationCommandInput | undefined) =>
  input?.InvalidationBatch?.Paths?.Items ?? [];

/** The purger's deps on the CloudFront adapter, its waits on a clock that never sleeps. */
function cloudFrontDeps() {
  const pending = new InMemoryPendingPurges();
  const cdn = new CloudFrontInvalidator({
    client,
    distributionId: 'E2EXAMPLE',
    pending,
    clock: new TestClock(undefined, { autoAdvance: true }),
    logger: { info: () => undefined, warn: () => undefined },
    random: () => 0.5,
  });
  return { deps: { cdn, maxReceiveCount: 5 }, pending };
}

/** A CDN that records each call and answers as told. */
function recordingCdn(answer: () => Promise<CdnPurge> = () => ok) {
  const calls: { tags: readonly string[]; effectId: string | undefined }[] = [];
  const cdn: CdnInvalidator = {
    invalidateTags: (tags, options) => {
      calls.push({ tags, effectId: options?.effectId });
      return answer();
    },
  };
  return { cdn, calls };
}
const ok: Promise<CdnPurge> = Promise.resolve({ status: 'submitted', invalidationIds: ['I1'] });

let ids = 0;
const record = (body: string, receiveCount = 1): PurgerMessage => ({
  messageId: `m${++ids}`,
  body,
  receiveCount,
});
/** The soft purge of page `n` of effect `effect` (its key tag). */
const softPurge = (effect: string, n: number) =>
  record(
    softPurgeOf(effect, {
      tenant: undefined,
      hash: n.toString(16).padStart(40, '0').padEnd(64, 'f'),
      pageHash: undefined,
    }).body,
  );

describe('processPurges (unit, in-memory ports and the CloudFront adapter on a mocked client)', () => {
  it('purges a batch of 1,000 messages of three effects in one invalidation, each tag once', async () => {
    acceptAll();
    const { deps } = cloudFrontDeps();
    // 900 soft purges of 600 pages (some published twice: a redelivery), and three deadlines.
    const batch = [
      ...Array.from({ length: 900 }, (_, i) => softPurge(`rv_${i % 3}`, i % 600)),
      ...Array.from({ length: 100 }, (_, i) =>
        record(deadlinePurgesOf(`rv_${i % 3}`, ['_/post', '_/news'], 300)[0].body),
      ),
    ];
    const reports = await processPurges(deps, batch);
    expect(reports).toHaveLength(1_000);
    expect(reports.every((report) => report.action === 'ack')).toBe(true);
    expect(reports.every((report) => report.outcome === 'submitted')).toBe(true);
    expect(inputs()).toHaveLength(1);
    const items = itemsOf(inputs()[0]);
    expect(items).toHaveLength(602);
    expect(new Set(items).size).toBe(602);
    expect(items).toEqual(expect.arrayContaining(['#_/post', '#_/news']));
  });

  it('splits past 3,000 items (CloudFront in progress at most): 4,000 tags in two invalidations', async () => {
    acceptAll();
    const { deps } = cloudFrontDeps();
    const batch = Array.from({ length: 1_000 }, (_, i) =>
      record(
        deadlinePurgesOf(
          'rv_big',
          [0, 1, 2, 3].map((j) => `_/t-${i}-${j}`),
          300,
        )[0].body,
      ),
    );
    const reports = await processPurges(deps, batch);
    expect(inputs().map((input) => itemsOf(input).length)).toEqual([3_000, 1_000]);
    expect(reports.every((report) => report.action === 'ack')).toBe(true);
  });

  it("dedupes an effect's tags and asks once per effect, with the effect as the purge identity", async () => {
    const { cdn, calls } = recordingCdn();
    const batch = [softPurge('rv_a', 1), softPurge('rv_a', 1), softPurge('rv_b', 1)];
    await processPurges({ cdn, maxReceiveCount: 5 }, batch);
    expect(calls.map((call) => [call.effectId, call.tags.length])).toEqual([
      ['rv_a', 1],
      ['rv_b', 1],
    ]);
  });

  it('dead-letters poison on its first receive, with the field that is wrong, and purges the rest', async () => {
    const { cdn, calls } = recordingCdn();
    const deadline = JSON.parse(deadlinePurgesOf('rv_a', ['_/post'], 300)[0].body) as object;
    const batch = [
      record('{"kind":"cdn-purge"'),
      record(JSON.stringify({ ...deadline, tags: ['has,comma'] })),
      record(JSON.stringify({ ...deadline, reason: 'whenever' })),
      record(JSON.stringify({ ...deadline, tags: [] })),
      softPurge('rv_a', 7),
    ];
    const reports = await processPurges({ cdn, maxReceiveCount: 5 }, batch);
    expect(reports.slice(0, 4).map((report) => [report.outcome, report.action])).toEqual(
      Array.from({ length: 4 }, () => ['poison', 'dead-letter']),
    );
    const reasons = reports.map((report) =>
      report.action === 'dead-letter' ? report.reason : undefined,
    );
    expect(reasons[0]).toEqual({ code: 'invalid-message', message: 'message body is not JSON' });
    expect(reasons[1]?.message).toMatch(/^message body is not a CDN purge: tags\.0: /);
    expect(reasons[2]?.message).toMatch(/reason: /);
    expect(reasons[3]?.message).toMatch(/tags: /);
    // Control: the valid message of the same batch is purged.
    expect(reports[4]).toMatchObject({ action: 'ack', outcome: 'submitted' });
    expect(calls).toHaveLength(1);
  });

  it('acknowledges a purge CloudFront keeps throttling once it is recorded pending, for the sweeper', async () => {
    cloudfront
      .on(CreateInvalidationCommand)
      .rejects(new TooManyInvalidationsInProgress({ message: 'busy', $metadata: {} }));
    const { deps, pending } = cloudFrontDeps();
    const reports = await processPurges(deps, [softPurge('rv_a', 1)]);
    expect(reports[0]).toMatchObject({ action: 'ack', outcome: 'pending' });
    expect(await pending.oldest(10)).toHaveLength(1);
  });

  it('dead-letters a purge CloudFront refuses for good at once, with its reason', async () => {
    cloudfront
      .on(CreateInvalidationCommand)
      .rejects(new AccessDenied({ message: 'not allowed', $metadata: {} }));
    const { deps } = cloudFrontDeps();
    const [report] = await processPurges(deps, [softPurge('rv_a', 1)]);
    expect(report).toMatchObject({
      action: 'dead-letter',
      outcome: 'refused',
      reason: { code: 'cdn-purge-rejected' },
    });
  });

  it('retries any other failure until the last receive, then dead-letters it', async () => {
    const { cdn } = recordingCdn(() => Promise.reject(new Error('DynamoDB unreachable')));
    const deps = { cdn, maxReceiveCount: 5 };
    const body = softPurge('rv_a', 1).body;
    expect((await processPurges(deps, [record(body, 4)]))[0]).toMatchObject({ action: 'retry' });
    expect((await processPurges(deps, [record(body, 5)]))[0]).toMatchObject({
      action: 'dead-letter',
      reason: { code: 'retries-exhausted' },
    });
  });
});
