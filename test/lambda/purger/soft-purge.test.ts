/**
 * A soft purge end to end on the local backends, every adapter real (DynamoDB Local, s3rver,
 * local-aws-sqs; only the CDN is a recorder, there being no local CloudFront): a revalidation
 * with `regenerate: true` queues the page's regeneration and its delayed deadline purge; the
 * worker publishes the new generation and only then queues the page's purge; the purger purges
 * its key tag, and at that moment the page's META is already the new generation. The control:
 * without `regenerate`, the purge is made at once, on the old generation.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { DynamoCacheTable } from '../../../lambda/adapters/cache-table/dynamodb.js';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { cdnKeyTagOf } from '../../../lambda/core/page/cache-tags.js';
import type { CacheMeta } from '../../../lambda/core/page/model.js';
import type { CdnInvalidator } from '../../../lambda/core/page/ports.js';
import { buildPurgerHandler } from '../../../lambda/purger/build.js';
import { buildRevalidateHandler } from '../../../lambda/revalidate/build.js';
import { loadPurgerConfig, loadRevalidateConfig } from '../../../lambda/shared/config.js';
import { functionUrlEvent } from '../../../local/function-url.js';
import { lambdaContext, pollOnce } from '../../../local/worker-poller.js';
import type { PurgeQueues } from '../../../local/provision.js';
import { createTestPurgeQueues, testClients } from '../../helpers/backends.js';
import { TestClock } from '../../helpers/clock.js';
import { countingRenderer } from '../../helpers/renderers.js';
import {
  createWorkerHarness,
  intentFor,
  type WorkerHarness,
} from '../../helpers/worker-harness.js';

/** One purge as the CDN got it, with the page's META as it stood at that moment. */
interface Purged {
  readonly by: 'revalidate' | 'purger';
  readonly tags: readonly string[];
  readonly metaThen: CacheMeta | undefined;
}

const clock = new TestClock();
const counter = countingRenderer((request, call) =>
  htmlPage(`<p>${request.cacheKey.key} #${call}</p>`, { revalidateSeconds: 600 }),
);
const purged: Purged[] = [];
let h: WorkerHarness;
let purges: PurgeQueues;
let meta: () => Promise<CacheMeta | undefined>;
let revalidate: (body: unknown, key: string) => Promise<Record<string, unknown>>;
let pollPurges: () => ReturnType<typeof pollOnce>;

/** A CDN that records each purge with the page's META read at that moment. */
const recordingCdn = (by: Purged['by']): CdnInvalidator => ({
  invalidateTags: async (tags) => {
    purged.push({ by, tags: [...tags], metaThen: await meta() });
    return { status: 'submitted', invalidationIds: [`I${purged.length}`] };
  },
});

beforeAll(async () => {
  purges = await createTestPurgeQueues(testClients());
  h = await createWorkerHarness({
    renderer: counter.renderer,
    clock,
    env: { ISR_PURGE_QUEUE_URL: purges.purgeQueueUrl },
  });
  const cacheTable = new DynamoCacheTable({ client: h.clients.dynamodb, tableName: h.tableName });
  meta = () => cacheTable.getMeta(h.keyFor('/a').pk, { consistent: true });
  const env = {
    FACETHEORY_CACHE_TABLE_NAME: h.tableName,
    ISR_BODY_BUCKET: h.bucket,
    ISR_QUEUE_URL: h.queues.queueUrl,
    ISR_PURGE_QUEUE_URL: purges.purgeQueueUrl,
    ISR_PURGE_DLQ_URL: purges.purgeDlqUrl,
    ISR_DEPLOY_ID: 'd1',
    ISR_IN_PROGRESS_CACHE_MS: '0',
  };
  // The revalidate function's waits move the shared clock on at once; the worker's do not.
  const revalidateClock = {
    now: () => clock.now(),
    sleep: (ms: number) => Promise.resolve(clock.advanceMs(ms)),
  };
  const handler = buildRevalidateHandler(loadRevalidateConfig(env), {
    clients: h.clients,
    clock: revalidateClock,
    cdn: recordingCdn('revalidate'),
    revalidateOpen: true,
  });
  revalidate = async (body, key) => {
    const base = functionUrlEvent({
      method: 'POST',
      target: '/_isr/revalidate',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
    });
    const event: LambdaFunctionURLEvent = { ...base, body: JSON.stringify(body) };
    const result = (await handler(event, lambdaContext(30_000, 'isr-revalidate'))) as {
      statusCode: number;
      body: string;
    };
    expect(result.statusCode).toBe(202);
    return JSON.parse(result.body) as Record<string, unknown>;
  };
  const purger = buildPurgerHandler(loadPurgerConfig(env), {
    clients: h.clients,
    cdn: recordingCdn('purger'),
  });
  pollPurges = () =>
    pollOnce({
      sqs: h.clients.sqs,
      queueUrl: purges.purgeQueueUrl,
      queueArn: purges.purgeQueueArn,
      handler: purger,
      batchSize: 10,
      waitTimeSeconds: 0,
    });
  // The page, published once.
  h.startInvocation();
  await h.send(intentFor('/a'), 'g-a');
  const first = await h.poll();
  if (first.received !== 1 || first.failed.length > 0) throw new Error('/a was not published');
}, 60_000);
afterAll(() => h.destroy());

const delayedPurges = async () => {
  const { Attributes } = await h.clients.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: purges.purgeQueueUrl,
      AttributeNames: ['ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return Number(Attributes?.ApproximateNumberOfMessagesDelayed);
};

describe('a soft purge on the local backends (revalidate -> worker -> purger)', () => {
  it('purges the page key tag only once its new generation is published', async () => {
    const before = await meta();
    expect(before?.s3Key).toBeDefined();
    const receipt = await revalidate({ paths: ['/a'], regenerate: true }, 'soft-1');
    expect(receipt.cdn).toMatchObject({ status: 'deferred', deadline_seconds: 300 });
    // Nothing purged at once; the deadline waits in the queue, delayed.
    expect(purged).toEqual([]);
    expect(await delayedPurges()).toBe(1);
    expect(await pollPurges()).toMatchObject({ received: 0 });
    // The worker publishes the new generation, then queues the page's purge.
    h.startInvocation();
    expect(await h.poll()).toMatchObject({ received: 1, failed: [] });
    const after = await meta();
    expect(after?.s3Key).not.toBe(before?.s3Key);
    expect(await pollPurges()).toMatchObject({ received: 1, failed: [] });
    expect(purged).toEqual([
      { by: 'purger', tags: [cdnKeyTagOf(h.keyFor('/a'))], metaThen: after },
    ]);
    // The new generation was live (fresh) when the edge was told to fetch the page again.
    expect(purged[0]?.metaThen?.revalidateSeconds).toBe(600);
    expect(await delayedPurges()).toBe(1); // the deadline is still due, harmlessly
  });

  it('control: without regenerate the purge is made at once, on the generation marked stale', async () => {
    purged.splice(0);
    const live = await meta();
    await revalidate({ paths: ['/a'] }, 'immediate-1');
    expect(purged).toHaveLength(1);
    expect(purged[0]).toMatchObject({ by: 'revalidate', tags: [cdnKeyTagOf(h.keyFor('/a'))] });
    // The old body, marked stale: the edge would fetch it again before any new one exists.
    expect(purged[0]?.metaThen?.s3Key).toBe(live?.s3Key);
    expect(purged[0]?.metaThen?.revalidateSeconds).toBe(0);
  });
});
