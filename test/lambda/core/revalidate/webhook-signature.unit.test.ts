import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { StaticSecretSource } from '../../../../lambda/adapters/secret-source/static.js';
import {
  requestTargetOf,
  signatureOf,
  signatureRefusal,
  signedHeadersOf,
  signedStringOf,
  type SignedParts,
} from '../../../../lambda/core/revalidate/webhook-signature.js';
import { serveRevalidation } from '../../../../lambda/core/revalidate/serve-revalidation.js';
import { memoryRevalidation, revalidateRequest as post } from '../../../helpers/revalidate.js';

const SECRET = 'whsec_test';
const NOW = 1_800_000_000;
const body = JSON.stringify({ paths: ['/a'] });
const PARTS: SignedParts = {
  timestamp: String(NOW),
  method: 'POST',
  target: '/_isr/revalidate',
  idempotencyKey: 'evt_1',
  rawBody: body,
};

describe('the signed string', () => {
  it('is six lines: the version, timestamp, method, target, Idempotency-Key, then the raw body', () => {
    expect(signedStringOf({ ...PARTS, rawBody: '{"a":\n1}' })).toBe(
      'isr-v1\n1800000000\nPOST\n/_isr/revalidate\nevt_1\n{"a":\n1}',
    );
    expect(
      signedStringOf({ ...PARTS, method: 'get', idempotencyKey: undefined, rawBody: '' }),
    ).toBe('isr-v1\n1800000000\nGET\n/_isr/revalidate\n\n');
  });

  it('is what the signature is an HMAC-SHA256 of, in hex', () => {
    const hex = createHmac('sha256', SECRET).update(signedStringOf(PARTS)).digest('hex');
    expect(signatureOf(SECRET, PARTS)).toBe(`sha256=${hex}`);
  });

  it('refuses a line break in a field before the body, which could shift the fields', () => {
    expect(() => signedStringOf({ ...PARTS, idempotencyKey: 'evt_1\n{}' })).toThrow(RangeError);
    const shifted = { ...PARTS, target: '/_isr/revalidate\nevt_1' };
    const request = { ...shifted, signature: 'sha256=' + '0'.repeat(64) };
    expect(signatureRefusal(request, SECRET, NOW, 300)).toBe('malformed-signed-field');
  });

  it('signs the request target a URL is sent with, query included', () => {
    expect(requestTargetOf('https://abc.lambda-url.eu-west-1.on.aws')).toBe('/');
    expect(requestTargetOf('http://127.0.0.1:3000/_isr/revalidate?x=1')).toBe(
      '/_isr/revalidate?x=1',
    );
  });

  it('gives clients both headers, the timestamp in whole seconds', () => {
    const headers = signedHeadersOf(SECRET, { ...PARTS, nowSeconds: NOW + 0.9 });
    expect(headers).toEqual({
      'x-isr-timestamp': String(NOW),
      'x-isr-signature': signatureOf(SECRET, PARTS),
    });
  });
});

describe('signatureRefusal', () => {
  const signed = (overrides: Partial<Parameters<typeof signatureRefusal>[0]> = {}) => ({
    ...PARTS,
    signature: signatureOf(SECRET, PARTS),
    ...overrides,
  });

  it('accepts a signature of this request, within the skew either way', () => {
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
    const other = signatureOf('another', PARTS);
    expect(signatureRefusal(signed({ signature: other }), SECRET, NOW, 300)).toBe(
      'signature-mismatch',
    );
  });

  it('refuses a correctly signed request whose timestamp is outside the skew', () => {
    const old = { ...PARTS, timestamp: String(NOW - 301) };
    expect(
      signatureRefusal({ ...old, signature: signatureOf(SECRET, old) }, SECRET, NOW, 300),
    ).toBe('timestamp-out-of-range');
    const ahead = { ...PARTS, timestamp: String(NOW + 301) };
    expect(
      signatureRefusal({ ...ahead, signature: signatureOf(SECRET, ahead) }, SECRET, NOW, 300),
    ).toBe('timestamp-out-of-range');
  });

  it.each([
    ['the body', { rawBody: JSON.stringify({ paths: ['/b'] }) }],
    ['the timestamp', { timestamp: String(NOW + 1) }],
    ['the method', { method: 'GET' }],
    ['the path', { target: '/_isr/revalidate/rv_other' }],
    ['the query', { target: '/_isr/revalidate?effect=rv_other' }],
    ['the Idempotency-Key', { idempotencyKey: 'evt_2' }],
    ['the Idempotency-Key, dropped', { idempotencyKey: undefined }],
  ])('refuses a signed request whose %s was changed after signing', (_field, change) => {
    expect(signatureRefusal(signed(change), SECRET, NOW, 300)).toBe('signature-mismatch');
  });

  it('never accepts the former "<timestamp>.<body>" signature', () => {
    const former = createHmac('sha256', SECRET).update(`${NOW}.${body}`).digest('hex');
    expect(signatureRefusal(signed({ signature: `sha256=${former}` }), SECRET, NOW, 300)).toBe(
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

  /** A request signed over exactly what it sends (or over `signedAs`, a captured original). */
  const signedPost = (
    raw: string,
    timestamp: number,
    init: { key?: string; method?: string; target?: string; secret?: string } = {},
    signedAs: Partial<SignedParts> = {},
  ) => {
    const sent = {
      timestamp: String(timestamp),
      method: init.method ?? 'POST',
      target: init.target ?? '/_isr/revalidate',
      idempotencyKey: init.key ?? 'evt_1',
      rawBody: raw,
    };
    return post(raw, {
      key: sent.idempotencyKey,
      method: sent.method,
      target: sent.target,
      headers: {
        'x-isr-timestamp': sent.timestamp,
        'x-isr-signature': signatureOf(init.secret ?? SECRET, { ...sent, ...signedAs }),
      },
    });
  };

  it('applies a signed request, logged as the webhook caller', async () => {
    const { deps, now, cdn } = setup();
    const reply = await serveRevalidation(deps, signedPost(body, now));
    expect(reply.status).toBe(202);
    expect(reply.log.caller).toBe('webhook');
    expect(cdn.purges).toHaveLength(1);
  });

  /** A captured request (key evt_1, POST, /_isr/revalidate, `body`) sent again with one change. */
  const captured = {
    idempotencyKey: 'evt_1',
    method: 'POST',
    target: '/_isr/revalidate',
    rawBody: body,
  };

  it.each([
    [
      'no signature',
      (now: number) => post(body, { key: 'evt_1', headers: { 'x-isr-timestamp': String(now) } }),
      'missing-signature',
    ],
    [
      'a wrong signature',
      (now: number) => signedPost(body, now, { secret: 'guess' }),
      'signature-mismatch',
    ],
    ['an old timestamp', (now: number) => signedPost(body, now - 600), 'timestamp-out-of-range'],
    [
      'a captured request replayed under a new Idempotency-Key',
      (now: number) => signedPost(body, now, { key: 'evt_2' }, captured),
      'signature-mismatch',
    ],
    [
      'a captured request replayed on another path',
      (now: number) => signedPost(body, now, { target: '/_isr/revalidate?x=1' }, captured),
      'signature-mismatch',
    ],
    [
      'a captured request replayed with another method',
      (now: number) => signedPost(body, now, { method: 'PUT' }, captured),
      'signature-mismatch',
    ],
    [
      'a captured request replayed with another body',
      (now: number) => signedPost(JSON.stringify({ tags: ['all'] }), now, {}, captured),
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

  it('negative control: the same replays signed over what they send are accepted', async () => {
    const { deps, now } = setup();
    const replays = [
      signedPost(body, now, { key: 'evt_2' }),
      signedPost(body, now, { key: 'evt_3', target: '/_isr/revalidate?x=1' }),
      signedPost(JSON.stringify({ tags: ['all'] }), now, { key: 'evt_4' }),
    ];
    for (const request of replays) {
      expect((await serveRevalidation(deps, request)).status).toBe(202);
    }
    // Another method, signed: past authentication, refused for what it is.
    expect((await serveRevalidation(deps, signedPost(body, now, { method: 'PUT' }))).status).toBe(
      405,
    );
  });

  it('answers 503 when the key cannot be read now (retryable)', async () => {
    const { deps, now } = setup();
    const broken = {
      ...deps,
      auth: { ...deps.auth, secret: { value: () => Promise.reject(new Error('extension down')) } },
    } as typeof deps;
    expect((await serveRevalidation(broken, signedPost(body, now))).status).toBe(503);
  });
});
