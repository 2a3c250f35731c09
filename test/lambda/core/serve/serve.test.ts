import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { parseIntent } from '../../../../lambda/core/page/intent.js';
import type { RegenerationQueue } from '../../../../lambda/core/page/ports.js';
import { TestClock } from '../../../helpers/clock.js';
import { createOriginHarness, type OriginHarness } from '../../../helpers/origin-harness.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import { withOverrides } from '../../../helpers/overrides.js';

const clock = new TestClock();
const counter = countingRenderer((request, call) => {
  switch (request.cacheKey.path) {
    case '/forbidden':
      return htmlPage('no', { status: 403 });
    case '/broken':
      return htmlPage('down', { status: 500 });
    case '/account':
      return {
        ...htmlPage('', { status: 302 }),
        location: '/login',
        headers: { 'cache-control': 'private, no-store' },
      };
    default:
      return htmlPage(`<p>${request.cacheKey.key} #${call}</p>`, { revalidateSeconds: 10 });
  }
});
let h: OriginHarness;
let paths = 0;
const freshPath = (prefix = 'page') => `/${prefix}-${++paths}`;

beforeAll(async () => {
  h = await createOriginHarness({ renderer: counter.renderer, clock });
});
afterAll(() => h.destroy());

describe('origin: MISS then HIT', () => {
  it('renders a miss in the request, publishes it, then serves it as a HIT', async () => {
    const path = freshPath();
    const miss = await h.invoke(path);
    expect(miss).toMatchObject({
      status: 200,
      cache: 'MISS',
      text: expect.stringContaining(path) as unknown as string,
    });
    expect(miss.headers['cache-control']).toBe(
      'public, max-age=0, s-maxage=10, stale-while-revalidate=60, stale-if-error=86400',
    );
    expect(miss.headers.etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(miss.headers['content-type']).toBe('text/html; charset=utf-8');

    clock.advance(4);
    const hit = await h.invoke(path);
    expect(hit).toMatchObject({ status: 200, cache: 'HIT', text: miss.text });
    expect(hit.headers.etag).toBe(miss.headers.etag);
    expect(hit.headers['cache-control']).toContain('s-maxage=6,');
    expect(counter.callsFor(path)).toBe(1);
  });

  it('answers If-None-Match with a 304 and no body, from META alone', async () => {
    const path = freshPath();
    const first = await h.invoke(path);
    const etag = first.headers.etag ?? '';
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const reply = await h.invoke(path, { headers: { 'if-none-match': ifNoneMatch } });
      expect(reply).toMatchObject({ status: 304, cache: 'HIT', text: undefined });
      expect(reply.headers.etag).toBe(etag);
    }
    expect((await h.invoke(path, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const path = freshPath();
    const head = await h.invoke(path, { method: 'HEAD' });
    expect(head).toMatchObject({ status: 200, cache: 'MISS', text: undefined });
    const headHit = await h.invoke(path, { method: 'HEAD' });
    expect(headHit).toMatchObject({ status: 200, cache: 'HIT', text: undefined });
    const get = await h.invoke(path);
    expect(get.headers.etag).toBe(headHit.headers.etag);
    expect(counter.callsFor(path)).toBe(1);
  });

  it('refuses methods other than GET and HEAD with 405 and Allow', async () => {
    const reply = await h.invoke('/a', { method: 'POST' });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('GET, HEAD');
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: 'method-not-allowed' });
  });
});

describe('origin: STALE', () => {
  it('serves the stale body at once with a short s-maxage and queues one intent', async () => {
    const path = freshPath();
    const first = await h.invoke(path);
    await h.queued(); // nothing else on the queue
    clock.advance(11);
    const stale = await h.invoke(path);
    expect(stale).toMatchObject({ status: 200, cache: 'STALE', text: first.text });
    expect(stale.headers['cache-control']).toContain('s-maxage=2,');
    const messages = await h.queued();
    expect(messages).toHaveLength(1);
    const meta = await h.cacheTable.getMeta(h.keyFor(path).pk, { consistent: true });
    expect(parseIntent(messages[0]?.Body ?? '')).toEqual({
      v: 1,
      path,
      query: '',
      deployId: 'd1',
      observedGeneratedAt: meta?.generatedAt,
      observedEtag: meta?.etag,
    });
    expect(counter.callsFor(path)).toBe(1);
  });

  it('collapses 100 concurrent stale hits into exactly one queued message', async () => {
    const path = freshPath();
    const first = await h.invoke(path);
    clock.advance(11);
    const replies = await Promise.all(Array.from({ length: 100 }, () => h.invoke(path)));
    expect(
      replies.every(
        (reply) => reply.status === 200 && reply.cache === 'STALE' && reply.text === first.text,
      ),
    ).toBe(true);
    expect(await h.queued()).toHaveLength(1);
    expect(counter.callsFor(path)).toBe(1);

    // A dropped regeneration is not locked out for SQS's 5 minutes: after the dedupe window the
    // next stale hit queues a new intent.
    clock.advance(h.config.dedupeWindowSeconds);
    await h.invoke(path);
    expect(await h.queued()).toHaveLength(1);
  });

  it('negative control: without the deduplication ID, the same storm queues a message per hit', async () => {
    const path = freshPath();
    await h.invoke(path);
    clock.advance(11);
    const undeduped: RegenerationQueue = {
      enqueue: (intent, options) =>
        h.deps.queue.enqueue(intent, { ...options, deduplicationId: randomUUID() }),
    };
    const handler = h.handlerWith({ queue: undeduped });
    await Promise.all(Array.from({ length: 20 }, () => h.invoke(path, { handler })));
    expect(await h.queued()).toHaveLength(20);
  });

  it('still serves the stale page when the enqueue fails', async () => {
    const path = freshPath();
    const first = await h.invoke(path);
    clock.advance(11);
    const brokenQueue: RegenerationQueue = {
      enqueue: () => Promise.reject(new Error('SQS is down')),
    };
    const reply = await h.invoke(path, { handler: h.handlerWith({ queue: brokenQueue }) });
    expect(reply).toMatchObject({ status: 200, cache: 'STALE', text: first.text });
  });
});

describe('origin: MISS with another lease holder', () => {
  /**
   * A viewer asks for a page another holder is rendering; the holder publishes after `polls`
   * of the viewer's polls, or never. Time moves only when the viewer sleeps between polls.
   */
  async function missWhileHeld(publishAfterPolls: number | undefined) {
    const path = freshPath();
    const key = h.keyFor(path);
    const lease = await h.cacheTable.acquireLease({
      pk: key.pk,
      now: clock.seconds,
      durationSeconds: 30,
    });
    const asked = clock.now();
    const sleptBefore = clock.slept.length;
    const reply = h.invoke(path);
    if (publishAfterPolls === undefined) {
      const answer = await clock.runUntil(reply);
      return { path, reply: answer, waitedMs: clock.now() - asked };
    }
    for (let poll = 0; poll < publishAfterPolls; poll++) {
      await clock.whenSleeping();
      clock.advanceToNextSleeper();
    }
    await clock.whenSleeping();
    const s3Key = `pages/_/${key.hash}/by-the-other-holder`;
    const { etag } = await h.bodies.putBody({
      s3Key,
      body: new TextEncoder().encode('published by the other holder'),
      contentType: 'text/html',
    });
    await h.cacheTable.publishGeneration({
      observed: undefined,
      lease,
      now: clock.seconds,
      meta: {
        pk: key.pk,
        s3Key,
        etag,
        generatedAt: clock.seconds,
        revalidateSeconds: 10,
        contentType: 'text/html',
      },
    });
    clock.advanceToNextSleeper();
    const answer = await reply;
    return {
      path,
      reply: answer,
      waitedMs: clock.now() - asked,
      polls: clock.slept.length - sleptBefore,
    };
  }

  it('waits for the holder to publish, then serves that page', async () => {
    const { path, reply, waitedMs, polls } = await missWhileHeld(2);
    expect(reply).toMatchObject({
      status: 200,
      cache: 'MISS',
      text: 'published by the other holder',
    });
    expect(counter.callsFor(path)).toBe(0);
    // It polled three times, backing off (25, 50, 100 ms), well inside its wait.
    expect(polls).toBe(3);
    expect(waitedMs).toBe(175);
  });

  it('answers 503 with Retry-After when the holder does not publish in time', async () => {
    const { path, reply, waitedMs } = await missWhileHeld(undefined);
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('2');
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: 'lease-held' });
    // It waited out exactly the configured time, on the clock, before answering.
    expect(waitedMs).toBe(h.config.missWaitMs);
    expect(counter.callsFor(path)).toBe(0);
  });
});

describe('origin: failures', () => {
  it('treats a META whose body is missing as a miss and renders again', async () => {
    const path = freshPath();
    await h.invoke(path);
    const before = await h.cacheTable.getMeta(h.keyFor(path).pk, { consistent: true });
    await h.bodies.deleteBody(before?.s3Key ?? '');
    const reply = await h.invoke(path);
    expect(reply).toMatchObject({ status: 200, cache: 'MISS' });
    const after = await h.cacheTable.getMeta(h.keyFor(path).pk, { consistent: true });
    expect(after?.s3Key).not.toBe(before?.s3Key);
    expect(counter.callsFor(path)).toBe(2);
  });

  it('answers 503 with Retry-After, never a stack trace, when DynamoDB fails', async () => {
    const failing = withOverrides(h.deps.cacheTable, {
      getMeta: () => Promise.reject(new Error('ProvisionedThroughputExceededException at line 42')),
    });
    const reply = await h.invoke('/any', { handler: h.handlerWith({ cacheTable: failing }) });
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('2');
    expect(reply.text).toBe(
      JSON.stringify({
        error: 'unavailable',
        message: 'the cache is unavailable; try again shortly',
      }),
    );
  });

  it('answers 503 when S3 fails on a hit', async () => {
    const path = freshPath();
    await h.invoke(path);
    const failingBodies = {
      ...h.deps.bodies,
      getBody: () => Promise.reject(new Error('SlowDown')),
    };
    const reply = await h.invoke(path, { handler: h.handlerWith({ bodies: failingBodies }) });
    expect(reply.status).toBe(503);
    expect(reply.text).not.toContain('SlowDown');
  });

  it('answers a miss whose render fails with 503 (retryable) or 502 (refused), publishing nothing', async () => {
    expect((await h.invoke('/broken')).status).toBe(503);
    const refused = await h.invoke('/forbidden');
    expect(refused.status).toBe(502);
    expect(JSON.parse(refused.text ?? '{}')).toMatchObject({ error: 'refused:status' });
    expect(
      await h.cacheTable.getMeta(h.keyFor('/forbidden').pk, { consistent: true }),
    ).toBeUndefined();
  });

  it('answers a redirect marked private, no-store with 502 naming the refusal, and never caches it', async () => {
    const reply = await h.invoke('/account');
    expect(reply.status).toBe(502);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(reply.headers['retry-after']).toBeUndefined();
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: 'refused:uncacheable' });
    expect(
      await h.cacheTable.getMeta(h.keyFor('/account').pk, { consistent: true }),
    ).toBeUndefined();
    expect((await h.invoke('/account')).status).toBe(502); // not served from a cache either
  });
});
