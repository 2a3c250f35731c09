/**
 * The origin's request log line carries the decision, the idempotency key and the cache key hash
 * (issue 35, item 10): a MISS's key is its regeneration's version, a STALE's the deduplication id
 * of the intent it queued (the same for every STALE of one window), anything else the request's
 * own id.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { versionIdOf } from '../../../lambda/core/page/rows.js';
import { functionUrlEvent } from '../../../local/function-url.js';
import { fixedContext, memoryService } from '../../helpers/memory-service.js';
import { countingRenderer } from '../../helpers/renderers.js';
import { invokeCollected, streamingOrigin } from '../../helpers/streaming-origin.js';

function origin() {
  const { renderer } = countingRenderer((_r, call) =>
    htmlPage(`v${call}`, { revalidateSeconds: 10 }),
  );
  const service = memoryService({ renderer });
  const logger = new Logger({ serviceName: 'isr-origin' });
  const lines: Record<string, unknown>[] = [];
  const record = (...args: unknown[]) => {
    lines.push(args[1] as Record<string, unknown>);
  };
  jest.spyOn(logger, 'info').mockImplementation(record);
  jest.spyOn(logger, 'error').mockImplementation(record);
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'isr-origin' });
  jest.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => metrics);
  const handler = streamingOrigin({
    deps: service.originDeps,
    tenantHeader: undefined,
    logger,
    metrics,
  });
  let requests = 0;
  /** One GET; resolves with its log line and the request id it ran under. */
  const get = async (path: string) => {
    requests += 1;
    const context = { ...fixedContext(30_000, 'isr-origin'), awsRequestId: `req-${requests}` };
    const event = functionUrlEvent({ method: 'GET', target: path, headers: {} });
    await invokeCollected(handler, event, context);
    return { line: lines.at(-1), requestId: context.awsRequestId };
  };
  return { ...service, get };
}

describe("the origin's log line (unit, in-memory ports)", () => {
  it("names a MISS by its regeneration's version, a HIT by its request id", async () => {
    const o = origin();
    const miss = await o.get('/hello');
    const meta = await o.cacheTable.getMeta(o.keyFor('/hello').pk);
    expect(meta?.currentSk).toBeDefined();
    expect(miss.line).toMatchObject({
      decision: 'new',
      idempotencyKey: versionIdOf(meta?.currentSk ?? ''),
      cacheKeyHash: o.keyFor('/hello').hash,
    });
    const hit = await o.get('/hello');
    expect(hit.line).toMatchObject({
      decision: 'fresh',
      idempotencyKey: hit.requestId,
      cacheKeyHash: o.keyFor('/hello').hash,
    });
  });

  it('names a STALE by the deduplication id of the intent it queued, the same for the window', async () => {
    const o = origin();
    await o.get('/hello');
    o.clock.advance(11);
    const first = await o.get('/hello');
    const second = await o.get('/hello');
    expect(o.queue.messages).toHaveLength(1);
    const dedupeId = o.queue.messages[0]?.deduplicationId;
    expect(first.line).toMatchObject({ decision: 'stale', idempotencyKey: dedupeId });
    // Another request, the same intent: the worker's line for it is found by this key.
    expect(second.line).toMatchObject({ decision: 'stale', idempotencyKey: dedupeId });
    expect(second.requestId).not.toBe(first.requestId);
  });

  it('names a refused request by its request id (no cache key, no intent)', async () => {
    const o = origin();
    const bad = await o.get('/%zz');
    expect(bad.line).toMatchObject({ idempotencyKey: bad.requestId });
    expect(bad.line?.decision).not.toBe('new');
  });
});
