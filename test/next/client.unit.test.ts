/**
 * Retries of one revalidation: bounded, with backoff, and every attempt under the call's one
 * Idempotency-Key with the same body, so the endpoint applies the call once however often it is
 * sent. Sleeps are recorded, never waited.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { signatureRefusal } from '../../lambda/core/revalidate/webhook-signature.js';
import { RevalidationFailedError } from '../../next/client.js';
import {
  adapterWith,
  closeEndpoints,
  NOW,
  recordingEndpoint,
  type Answer,
} from '../helpers/next-adapter.js';

afterEach(closeEndpoints);

const unavailable: Answer = {
  status: 503,
  headers: { 'retry-after': '1' },
  body: '{"error":"unavailable","message":"retry"}',
};
const inProgress: Answer = {
  status: 409,
  headers: { 'retry-after': '3' },
  body: '{"error":"in-progress","message":"being applied"}',
};

async function setup(answers: Answer[], env: Record<string, string> = {}) {
  const endpoint = await recordingEndpoint(answers);
  const adapter = adapterWith({ ISR_REVALIDATE_URL: `${endpoint.url}/_isr/revalidate`, ...env });
  return { ...endpoint, ...adapter };
}

describe('a revalidation that fails for a while', () => {
  it('is retried under the same Idempotency-Key and body until it is accepted', async () => {
    const { handler, received, sleeps, logs } = await setup(['drop', unavailable, inProgress]);
    await handler.revalidateTag(['posts'], { expire: 60 });
    expect(received).toHaveLength(4);
    expect(new Set(received.map((r) => r.headers['idempotency-key']))).toEqual(
      new Set(['next-k1']),
    );
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    // 250 ms doubling, half of it jittered (random 0.5), never under Retry-After.
    expect(sleeps).toEqual([187.5, 1000, 3000]);
    expect(logs.map((log) => log.fields.message)).toEqual([
      'revalidation retried',
      'revalidation retried',
      'revalidation retried',
      'revalidation accepted',
    ]);
  });

  it('signs every attempt again (a new timestamp), still over the same key', async () => {
    let second = 0;
    const endpoint = await recordingEndpoint([unavailable]);
    const { handler } = adapterWith(
      { ISR_REVALIDATE_URL: `${endpoint.url}/_isr/revalidate`, ISR_REVALIDATE_SECRET: 'whsec' },
      { now: () => new Date(NOW.getTime() + 1000 * second++) },
    );
    await handler.revalidateTag(['posts'], undefined);
    const [first, retry] = endpoint.received;
    const [at, retriedAt] = [first, retry].map((r) => Number(r?.headers['x-isr-timestamp']));
    expect(at).toBeGreaterThanOrEqual(NOW.getTime() / 1000);
    expect(retriedAt).toBe((at ?? 0) + 1);
    for (const request of [first, retry]) {
      const seen = {
        signature: request?.headers['x-isr-signature'],
        timestamp: request?.headers['x-isr-timestamp'],
        method: request?.method ?? '',
        target: request?.target ?? '',
        idempotencyKey: request?.headers['idempotency-key'],
        rawBody: request?.body ?? '',
      };
      expect(seen.idempotencyKey).toBe('next-k1');
      expect(signatureRefusal(seen, 'whsec', Number(seen.timestamp), 300)).toBeUndefined();
    }
  });

  it('gives up after 4 attempts and fails the call with the last reason', async () => {
    const { handler, received, sleeps } = await setup([
      unavailable,
      unavailable,
      unavailable,
      unavailable,
      unavailable,
    ]);
    const failure = handler.revalidateTag(['posts'], undefined);
    await expect(failure).rejects.toBeInstanceOf(RevalidationFailedError);
    await expect(failure).rejects.toMatchObject({
      idempotencyKey: 'next-k1',
      status: 503,
      reason: 'unavailable: retry',
    });
    expect(received).toHaveLength(4);
    expect(sleeps).toHaveLength(3);
  });

  it('gives each call its own key: a second call is a second revalidation', async () => {
    const { handler, received } = await setup([]);
    await handler.revalidateTag(['posts'], undefined);
    await handler.revalidateTag(['posts'], undefined);
    expect(received.map((r) => r.headers['idempotency-key'])).toEqual(['next-k1', 'next-k2']);
  });

  it('splits a call past the limits into requests with keys of their own', async () => {
    const { handler, received } = await setup([]);
    await handler.revalidateTag(
      Array.from({ length: 101 }, (_, i) => `t${i}`),
      undefined,
    );
    expect(received.map((r) => r.headers['idempotency-key'])).toEqual(['next-k1.0', 'next-k1.1']);
  });
});

describe('a revalidation the endpoint refuses', () => {
  it.each([
    [400, '{"error":"invalid-request","field":"paths[0]","message":"paths[0]: too long"}'],
    [401, '{"error":"unauthorized","reason":"signature-mismatch"}'],
    [403, '{"Message":"Forbidden"}'],
    [409, '{"error":"idempotency-key-reused","message":"another request"}'],
    [413, '{"error":"too-large","field":"tags","message":"at most 100 tags"}'],
  ])('is not retried (%i): the call fails with the reason', async (status, body) => {
    const { handler, received, logs } = await setup([{ status, body }]);
    await expect(handler.revalidateTag(['posts'], undefined)).rejects.toMatchObject({
      name: 'RevalidationFailedError',
      status,
    });
    expect(received).toHaveLength(1);
    expect(logs.at(-1)).toMatchObject({
      level: 'error',
      fields: { message: 'revalidation failed', idempotency_key: 'next-k1', status },
    });
  });
});
