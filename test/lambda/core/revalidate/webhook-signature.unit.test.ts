import { describe, expect, it } from '@jest/globals';
import { StaticSecretSource } from '../../../../lambda/adapters/secret-source/static.js';
import {
  signatureOf,
  signatureRefusal,
} from '../../../../lambda/core/revalidate/webhook-signature.js';
import {
  serveRevalidation,
  type RevalidateServiceDeps,
} from '../../../../lambda/core/revalidate/serve-revalidation.js';
import { memoryRevalidation, revalidateRequest as post } from '../../../helpers/revalidate.js';

const SECRET = 'whsec_test';
const NOW = 1_800_000_000;
const body = JSON.stringify({ paths: ['/a'] });

describe('signatureRefusal', () => {
  const signed = (overrides: Partial<Parameters<typeof signatureRefusal>[0]> = {}) => ({
    signature: signatureOf(SECRET, String(NOW), body),
    timestamp: String(NOW),
    rawBody: body,
    ...overrides,
  });

  it('accepts a signature of this timestamp and body, within the skew either way', () => {
    expect(signatureRefusal(signed(), SECRET, NOW, 300)).toBeUndefined();
    expect(signatureRefusal(signed(), SECRET, NOW + 300, 300)).toBeUndefined();
    expect(signatureRefusal(signed(), SECRET, NOW - 300, 300)).toBeUndefined();
  });

  it('refuses a request without a signature', () => {
    expect(signatureRefusal(signed({ signature: undefined }), SECRET, NOW, 300)).toBe(
      'missing-signature',
    );
  });

  it('refuses a request without a timestamp', () => {
    expect(signatureRefusal(signed({ timestamp: undefined }), SECRET, NOW, 300)).toBe(
      'missing-timestamp',
    );
  });

  it('refuses a signature made with another key', () => {
    const other = signatureOf('another', String(NOW), body);
    expect(signatureRefusal(signed({ signature: other }), SECRET, NOW, 300)).toBe(
      'signature-mismatch',
    );
  });

  it('refuses a correctly signed request whose timestamp is outside the skew', () => {
    const old = String(NOW - 301);
    const request = signed({ timestamp: old, signature: signatureOf(SECRET, old, body) });
    expect(signatureRefusal(request, SECRET, NOW, 300)).toBe('timestamp-out-of-range');
    const future = String(NOW + 301);
    const ahead = signed({ timestamp: future, signature: signatureOf(SECRET, future, body) });
    expect(signatureRefusal(ahead, SECRET, NOW, 300)).toBe('timestamp-out-of-range');
  });

  it('refuses a signature whose body was changed after signing', () => {
    const changed = JSON.stringify({ paths: ['/b'] });
    expect(signatureRefusal(signed({ rawBody: changed }), SECRET, NOW, 300)).toBe(
      'signature-mismatch',
    );
  });

  it('refuses a timestamp moved after signing (the timestamp is signed too)', () => {
    expect(signatureRefusal(signed({ timestamp: String(NOW + 1) }), SECRET, NOW, 300)).toBe(
      'signature-mismatch',
    );
  });

  it('refuses malformed values without comparing them', () => {
    expect(signatureRefusal(signed({ signature: 'sha1=abc' }), SECRET, NOW, 300)).toBe(
      'malformed-signature',
    );
    expect(signatureRefusal(signed({ signature: 'sha256=abcd' }), SECRET, NOW, 300)).toBe(
      'malformed-signature',
    );
    expect(signatureRefusal(signed({ timestamp: '1e9' }), SECRET, NOW, 300)).toBe(
      'malformed-timestamp',
    );
  });
});

describe('serveRevalidation in HMAC mode', () => {
  function setup() {
    const { deps, cdn, service } = memoryRevalidation({
      auth: { kind: 'hmac', secret: new StaticSecretSource(SECRET), skewSeconds: 300 },
    });
    return { deps, cdn, service, now: service.clock.seconds };
  }

  const signedPost = (raw: string, timestamp: number, signedBody = raw, secret = SECRET) =>
    post(raw, {
      key: 'evt_1',
      headers: {
        'x-isr-timestamp': String(timestamp),
        'x-isr-signature': signatureOf(secret, String(timestamp), signedBody),
      },
    });

  it('applies a signed request, logged as the webhook caller', async () => {
    const { deps, now, cdn } = setup();
    const reply = await serveRevalidation(deps, signedPost(body, now));
    expect(reply.status).toBe(202);
    expect(reply.log.caller).toBe('webhook');
    expect(cdn.purges).toHaveLength(1);
  });

  it.each([
    [
      'no signature',
      (now: number) => post(body, { key: 'evt_1', headers: { 'x-isr-timestamp': String(now) } }),
      'missing-signature',
    ],
    [
      'a wrong signature',
      (now: number) => signedPost(body, now, body, 'guess'),
      'signature-mismatch',
    ],
    ['an old timestamp', (now: number) => signedPost(body, now - 600), 'timestamp-out-of-range'],
    [
      'a changed body',
      (now: number) => signedPost(JSON.stringify({ paths: ['/b'] }), now, body),
      'signature-mismatch',
    ],
  ])(
    'answers 401 with the reason to %s, before anything is stored or applied',
    async (_what, request, reason) => {
      const { deps, now, cdn, service } = setup();
      const reply = await serveRevalidation(deps, request(now));
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body)).toEqual({ error: 'unauthorized', reason });
      expect(reply.log.decision).toBe('unauthorized');
      expect(cdn.purges).toEqual([]);
      expect(service.state.requests.size).toBe(0);
    },
  );

  it('answers 503 when the key cannot be read now (retryable)', async () => {
    const { deps, now } = setup();
    const broken = {
      ...deps,
      auth: { ...deps.auth, secret: { value: () => Promise.reject(new Error('extension down')) } },
    } as RevalidateServiceDeps;
    expect((await serveRevalidation(broken, signedPost(body, now))).status).toBe(503);
  });
});
