import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { sha256Hex } from '../../../../lambda/core/page/cache-key.js';
import { messageGroupOf, regenerationIntent } from '../../../../lambda/core/page/intent.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import { SimulatedFifoQueue } from '../../../helpers/fifo-queue.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import { intentFor, message } from '../../../helpers/worker-harness.js';

/** What the previous design did: keys spread over a fixed number of shared groups. */
const sharedGroupOf = (hash: string) => `g${Number.parseInt(hash.slice(0, 8), 16) % 64}`;

/**
 * A page that always fails (retried through SQS until the DLQ) and an unrelated page queued
 * right after it; the event source polls every second. Returns when the good page was published
 * (virtual seconds after it was queued).
 */
async function secondsUntilGoodPagePublished(groupOf: (pk: string, hash: string) => string) {
  const renderer = countingRenderer((request) =>
    request.cacheKey.path === '/failing' ? htmlPage('down', { status: 503 }) : htmlPage('ok'),
  );
  const service = memoryService({ renderer: renderer.renderer });
  const failing = service.keyFor('/failing');
  // An unrelated page that the shared grouping puts in the failing page's group.
  let good = service.keyFor('/good-0');
  for (let i = 1; sharedGroupOf(good.hash) !== sharedGroupOf(failing.hash); i++) {
    good = service.keyFor(`/good-${i}`);
  }
  const queue = new SimulatedFifoQueue(180);
  queue.send(intentFor(failing.path), groupOf(failing.pk, failing.hash));
  queue.send(intentFor(good.path), groupOf(good.pk, good.hash));
  for (let now = 0; now < 3_600; now++) {
    service.clock.advance(1);
    for (const received of queue.receive(10, now)) {
      const report = await processMessage(
        service.workerDeps,
        message(received.id, received.body, received.receiveCount),
      );
      if (report.action !== 'retry') queue.delete(received.id);
    }
    if (await service.cacheTable.getMeta(good.pk)) return now;
  }
  return Infinity;
}

describe('FIFO message groups', () => {
  it('give every cache key its own group, at most 128 characters', () => {
    const service = memoryService({ renderer: countingRenderer().renderer });
    const a = service.keyFor('/a');
    const b = service.keyFor('/b');
    expect(messageGroupOf(a.pk)).toBe(sha256Hex(a.pk));
    expect(messageGroupOf(a.pk)).not.toBe(messageGroupOf(b.pk));
    const tenantPk = service.keyFor('/a', '', 'a-tenant-with-a-long-name-0123456789abcdef').pk;
    expect(messageGroupOf(tenantPk).length).toBeLessThanOrEqual(128);
  });

  it('let an unrelated page regenerate at once while a failing page is retried', async () => {
    expect(await secondsUntilGoodPagePublished((pk) => messageGroupOf(pk))).toBe(0);
  });

  it('negative control: with groups shared between keys, the good page waits out every retry', async () => {
    const waited = await secondsUntilGoodPagePublished((_pk, hash) => sharedGroupOf(hash));
    expect(waited).toBeGreaterThanOrEqual(4 * 180); // four visibility timeouts before the DLQ
  });
});

describe('regenerationIntent: one builder, one dedupe scheme', () => {
  const page = { tenant: 'acme', path: '/a', query: 'page=2', pk: 'TENANT#acme#CACHE#h' };
  const meta = { generatedAt: 1_000, etag: '"e1"', revalidatedAt: undefined };
  const stale = (overrides: Partial<typeof meta> = {}, nowSeconds = 1_000) =>
    regenerationIntent(page, 'd1', {
      kind: 'stale',
      meta: { ...meta, ...overrides },
      nowSeconds,
      windowSeconds: 30,
    });

  it('queues a stale hit as an intent naming the generation it saw, grouped by its key', () => {
    expect(stale()).toEqual({
      intent: {
        v: 1,
        tenant: 'acme',
        path: '/a',
        query: 'page=2',
        deployId: 'd1',
        observedGeneratedAt: 1_000,
        observedEtag: '"e1"',
      },
      deduplicationId: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown as string,
      groupId: messageGroupOf(page.pk),
    });
  });

  it('collapses stale hits on one generation within a window, and no others', () => {
    const first = stale().deduplicationId;
    expect(stale({}, 1_019).deduplicationId).toBe(first);
    expect(stale({}, 1_020).deduplicationId).not.toBe(first); // the next window
    expect(stale({ generatedAt: 1_001 }).deduplicationId).not.toBe(first);
    expect(stale({ etag: '"e2"' }).deduplicationId).not.toBe(first);
    expect(stale({ revalidatedAt: 999 } as never).deduplicationId).not.toBe(first);
    const otherDeploy = regenerationIntent(page, 'd2', {
      kind: 'stale',
      meta,
      nowSeconds: 1_000,
      windowSeconds: 30,
    });
    expect(otherDeploy.deduplicationId).not.toBe(first);
  });

  it('queues one explicit intent per page and revalidation, retries of it included', () => {
    const of = (effectId: string, pk = page.pk) =>
      regenerationIntent({ ...page, pk }, 'd1', { kind: 'revalidation', effectId });
    expect(of('rv_1').intent).toEqual({
      v: 1,
      tenant: 'acme',
      path: '/a',
      query: 'page=2',
      deployId: 'd1',
    });
    expect(of('rv_1').deduplicationId).toBe(of('rv_1').deduplicationId);
    expect(of('rv_2').deduplicationId).not.toBe(of('rv_1').deduplicationId);
    expect(of('rv_1', 'CACHE#other').deduplicationId).not.toBe(of('rv_1').deduplicationId);
    expect(of('rv_1').deduplicationId).not.toBe(stale().deduplicationId);
  });
});
