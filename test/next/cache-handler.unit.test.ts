/**
 * The adapter as Next uses it (`new Handler(ctx)`, then get/set/revalidateTag), calling a real
 * HTTP server on loopback that stands in for the revalidate endpoint and records what it got.
 * Time is a fake sleep that records each delay; nothing here waits on the clock.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { signatureRefusal } from '../../lambda/core/revalidate/webhook-signature.js';
import {
  adapterWith,
  closeEndpoints,
  NOW,
  recordingEndpoint as endpoint,
  type Received,
} from '../helpers/next-adapter.js';
import { sigV4Holds } from '../helpers/sigv4.js';

afterEach(closeEndpoints);
const handlerWith = adapterWith;

describe('the cacheHandler: caching', () => {
  const env = { ISR_REVALIDATE_URL: 'http://127.0.0.1:1/_isr/revalidate' };

  it('always misses, so every request that reaches Next renders fresh', async () => {
    const { handler } = handlerWith(env);
    await handler.set('/route-cache/APP_PAGE/x/$/isr', { kind: 'APP_PAGE', headers: {} });
    expect(await handler.get('/route-cache/APP_PAGE/x/$/isr')).toBeNull();
  });

  it("puts the page's tags in the header the service reads, on the value Next sends", async () => {
    const { handler } = handlerWith({ ...env, ISR_UPSTREAM_TAG_HEADER: 'Surrogate-Key' });
    const headers: Record<string, string> = {
      'x-next-cache-tags':
        '_N_T_/layout,_N_T_/isr/layout,_N_T_/isr/page,_N_T_/isr,posts,post:hello',
      'x-nextjs-stale-time': '300',
    };
    await handler.set('k', { kind: 'APP_PAGE', headers });
    expect(headers['surrogate-key']).toBe(
      'posts,post:hello,_N_T_/layout,_N_T_/isr/layout,_N_T_/isr/page,_N_T_/isr',
    );
    const own = { 'x-next-cache-tags': '_N_T_/feed.json,posts', 'surrogate-key': 'feed' };
    await handler.set('k', { kind: 'APP_ROUTE', headers: own });
    expect(own['surrogate-key']).toBe('feed,posts,_N_T_/feed.json');
  });

  it('leaves values without page tags alone (data cache entries, null)', async () => {
    const { handler } = handlerWith(env);
    const fetchValue = { kind: 'FETCH', data: {}, tags: ['posts'] };
    await handler.set('k', fetchValue);
    expect(fetchValue).toEqual({ kind: 'FETCH', data: {}, tags: ['posts'] });
    await expect(handler.set('k', null)).resolves.toBeUndefined();
  });
});

describe('the cacheHandler: configuration', () => {
  it('refuses to start without ISR_REVALIDATE_URL, naming it', () => {
    expect(() => handlerWith({})).toThrow(/ISR_REVALIDATE_URL is required/);
  });

  it('lets next build render without it: a build never revalidates', async () => {
    const { handler } = handlerWith({ NEXT_PHASE: 'phase-production-build' });
    await expect(handler.get('k')).resolves.toBeNull();
    await expect(handler.revalidateTag('posts')).rejects.toThrow(/ISR_REVALIDATE_URL is required/);
  });
});

describe('the cacheHandler: revalidateTag calls the endpoint', () => {
  it("unsigned on loopback, with the call's mapping and an Idempotency-Key", async () => {
    const { url, received } = await endpoint();
    const { handler, logs } = handlerWith({ ISR_REVALIDATE_URL: `${url}/_isr/revalidate` });
    await handler.revalidateTag(['_N_T_/isr'], undefined);
    await handler.revalidateTag('posts', { expire: 31536000 });
    expect(
      received.map((r) => [
        r.method,
        r.target,
        r.headers['idempotency-key'],
        JSON.parse(r.body) as unknown,
      ]),
    ).toEqual([
      [
        'POST',
        '/_isr/revalidate',
        'next-k1',
        { paths: ['/isr'], tags: ['_N_T_/isr'], mode: 'expire' },
      ],
      ['POST', '/_isr/revalidate', 'next-k2', { tags: ['posts'], mode: 'stale', regenerate: true }],
    ]);
    expect(received[0]?.headers).not.toHaveProperty('x-isr-signature');
    expect(received[0]?.headers).not.toHaveProperty('authorization');
    expect(received[0]?.headers).not.toHaveProperty('cookie');
    expect(logs.map((log) => [log.level, log.fields.message, log.fields.effect_id])).toEqual([
      ['info', 'revalidation accepted', 'rv_1'],
      ['info', 'revalidation accepted', 'rv_2'],
    ]);
  });

  it('signed with HMAC when a secret is set: the endpoint verifies what it received', async () => {
    const { url, received } = await endpoint();
    const { handler } = handlerWith({
      ISR_REVALIDATE_URL: `${url}/_isr/revalidate?site=a`,
      ISR_REVALIDATE_SECRET: 'whsec',
    });
    await handler.revalidateTag(['posts'], { expire: 0 });
    const [request] = received;
    const seen = {
      signature: request?.headers['x-isr-signature'],
      timestamp: request?.headers['x-isr-timestamp'],
      method: request?.method ?? '',
      target: request?.target ?? '',
      idempotencyKey: request?.headers['idempotency-key'],
      rawBody: request?.body ?? '',
    };
    expect(seen.timestamp).toBe(String(NOW.getTime() / 1000));
    expect(signatureRefusal(seen, 'whsec', NOW.getTime() / 1000, 300)).toBeUndefined();
    // Negative controls: another secret, key or body does not verify.
    expect(signatureRefusal(seen, 'other', NOW.getTime() / 1000, 300)).toBe('signature-mismatch');
    expect(
      signatureRefusal({ ...seen, idempotencyKey: 'next-k9' }, 'whsec', NOW.getTime() / 1000, 300),
    ).toBe('signature-mismatch');
    expect(
      signatureRefusal(
        { ...seen, rawBody: '{"tags":["all"]}' },
        'whsec',
        NOW.getTime() / 1000,
        300,
      ),
    ).toBe('signature-mismatch');
  });

  /** A function URL's requests, delivered to the local endpoint instead (fetch sets Host). */
  const redirectTo =
    (local: string): typeof fetch =>
    (input, init) =>
      globalThis.fetch(`${local}${new URL(input).pathname}`, init);
  const FUNCTION_URL = 'https://abc123.lambda-url.eu-west-1.on.aws/';
  const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' };
  const asSent = (request: Received) => ({
    method: request.method,
    url: FUNCTION_URL,
    headers: request.headers,
    body: request.body,
  });

  it("signed with SigV4 for a function URL: service lambda, the URL's region", async () => {
    const { url, received } = await endpoint();
    const { handler } = handlerWith(
      { ISR_REVALIDATE_URL: FUNCTION_URL },
      { fetch: redirectTo(url), credentials },
    );
    await handler.revalidateTag(['posts'], { expire: 60 });
    const [request] = received;
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261124\/eu-west-1\/lambda\/aws4_request, SignedHeaders=[^,]*idempotency-key/,
    );
    expect(sigV4Holds(asSent(request), credentials.secretAccessKey)).toBe(true);
    // Negative controls: another body, key or secret does not verify.
    const sent = asSent(request);
    expect(sigV4Holds({ ...sent, body: '{"tags":["all"]}' }, credentials.secretAccessKey)).toBe(
      false,
    );
    expect(
      sigV4Holds(
        { ...sent, headers: { ...sent.headers, 'idempotency-key': 'x' } },
        credentials.secretAccessKey,
      ),
    ).toBe(false);
    expect(sigV4Holds(sent, 'not-the-secret')).toBe(false);
  });

  const restore = (name: string, value: string | undefined) => {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  };

  it('finds SigV4 credentials through the default AWS chain (here: the environment)', async () => {
    const { url, received } = await endpoint();
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, key: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'AKIDFROMENV';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret-from-env';
    try {
      const { handler } = handlerWith(
        { ISR_REVALIDATE_URL: FUNCTION_URL },
        { fetch: redirectTo(url) },
      );
      await handler.revalidateTag(['posts'], undefined);
    } finally {
      restore('AWS_ACCESS_KEY_ID', saved.id);
      restore('AWS_SECRET_ACCESS_KEY', saved.key);
    }
    expect(received[0]?.headers.authorization).toContain('Credential=AKIDFROMENV/');
    expect(sigV4Holds(asSent(received[0]), 'secret-from-env')).toBe(true);
  });
});
