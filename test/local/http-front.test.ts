import { afterEach, describe, expect, it } from '@jest/globals';
import { StaticSecretSource } from '../../lambda/adapters/secret-source/static.js';
import { signatureOf } from '../../lambda/core/revalidate/webhook-signature.js';
import { TestClock } from '../helpers/clock.js';
import { createOriginHarness } from '../helpers/origin-harness.js';
import { countingRenderer } from '../helpers/renderers.js';
import { recordingCdn } from '../helpers/revalidate.js';
import { createRevalidateHarness } from '../helpers/revalidate-harness.js';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { FunctionUrlResult } from '../../lambda/origin/handler.js';
import { startHttpFront, type HttpFront, type OriginHandler } from '../../local/http-front.js';
import { listeningAddresses } from './processes.js';
import { rawRequest as send } from './raw-request.js';

const fronts: HttpFront[] = [];
afterEach(async () => {
  await Promise.all(fronts.splice(0).map((front) => front.close()));
});

async function front(
  handler: OriginHandler,
  host?: string,
  options: { keepAliveTimeoutMs?: number } = {},
): Promise<HttpFront> {
  const started = await startHttpFront({
    handler,
    port: 0,
    ...options,
    ...(host === undefined ? {} : { host }),
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
  });
  fronts.push(started);
  return started;
}

const answering =
  (result: FunctionUrlResult): OriginHandler =>
  () =>
    Promise.resolve(result);

const portOf = (url: string) => Number(new URL(url).port);

describe('startHttpFront', () => {
  it('sends Content-Length for a text body, counting bytes, not characters', async () => {
    const body = '<p>héllo ✓</p>';
    const { url } = await front(
      answering({ statusCode: 200, headers: { 'content-type': 'text/html' }, body }),
    );
    const reply = await send(`${url}/page`);
    expect(reply.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(reply.headers['transfer-encoding']).toBeUndefined();
    expect(reply.body.toString()).toBe(body);
  });

  it('sends Content-Length for a base64 body, counting the decoded bytes', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253]);
    const { url } = await front(
      answering({
        statusCode: 200,
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes.toString('base64'),
        isBase64Encoded: true,
      }),
    );
    const reply = await send(`${url}/file`);
    expect(reply.headers['content-length']).toBe('7');
    expect(reply.body).toEqual(bytes);
  });

  it('keeps a Content-Length the handler set, and passes it through on HEAD', async () => {
    const { url } = await front(
      answering({
        statusCode: 200,
        headers: { 'content-type': 'text/html', 'Content-Length': '42' },
      }),
    );
    const reply = await send(`${url}/page`, 'HEAD');
    expect(reply.headers['content-length']).toBe('42');
    expect(reply.body.length).toBe(0);
  });

  it('derives no length on HEAD or for a 304', async () => {
    const { url } = await front((event) =>
      Promise.resolve({
        statusCode: event.rawPath === '/unchanged' ? 304 : 200,
        headers: { etag: '"1"' },
        body: 'not sent',
      }),
    );
    expect((await send(`${url}/page`, 'HEAD')).headers['content-length']).toBeUndefined();
    expect((await send(`${url}/unchanged`)).headers['content-length']).toBeUndefined();
  });

  it('listens on 127.0.0.1 by default, and where it is told to otherwise', async () => {
    const local = await front(answering({ statusCode: 204 }));
    expect(listeningAddresses(portOf(local.url))).toEqual(['127.0.0.1']);
    expect(local.url).toBe(`http://localhost:${portOf(local.url)}`);
    // The negative control of the end-to-end check: an open server is seen as one.
    const open = await front(answering({ statusCode: 204 }), '0.0.0.0');
    expect(listeningAddresses(portOf(open.url))).toEqual(['0.0.0.0']);
  });

  it('on close, refuses new requests, answers those in flight, and reports the ones that failed', async () => {
    const release: Array<() => void> = [];
    const arrived: string[] = [];
    const started = await startHttpFront({
      handler: (event) => {
        arrived.push(event.rawPath);
        return new Promise((resolve) =>
          release.push(() =>
            resolve({ statusCode: event.rawPath === '/broken' ? 503 : 200, body: 'done' }),
          ),
        );
      },
      port: 0,
      tenantHeader: undefined,
      functionTimeoutMs: 30_000,
      onError: () => undefined,
    });
    const ok = send(`${started.url}/ok`);
    const broken = send(`${started.url}/broken`);
    while (arrived.length < 2) await new Promise((resolve) => setImmediate(resolve));

    let closed = false;
    const closing = started.close().then((failed) => {
      closed = true;
      return failed;
    });
    await expect(send(`${started.url}/late`)).rejects.toThrow(/ECONNREFUSED/);
    expect(closed).toBe(false);

    release.forEach((answer) => answer());
    expect((await ok).status).toBe(200);
    expect((await broken).status).toBe(503);
    expect(await closing).toEqual(['GET /broken answered 503']);
  });

  it('closes the keep-alive connection of an answer sent while closing, so the stop need not wait', async () => {
    const held: Array<() => void> = [];
    // Idle connections are kept open far longer than the test may run: the stop completes only
    // if the answer closed its connection itself.
    const started = await front(
      () => new Promise((resolve) => held.push(() => resolve({ statusCode: 200, body: 'hi' }))),
      undefined,
      { keepAliveTimeoutMs: 3_600_000 },
    );
    const inFlight = fetch(`${started.url}/page`); // undici keeps connections alive
    while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const closing = started.close();
    held.forEach((answer) => answer());
    const response = await inFlight;
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.text()).toBe('hi');
    expect(await closing).toEqual([]);
  });
});

describe('startHttpFront: POST /_isr/revalidate', () => {
  async function withRevalidation() {
    const seen: { origin: LambdaFunctionURLEvent[]; revalidate: LambdaFunctionURLEvent[] } = {
      origin: [],
      revalidate: [],
    };
    const started = await startHttpFront({
      handler: (event) => {
        seen.origin.push(event);
        return Promise.resolve({ statusCode: 200, body: 'page' });
      },
      revalidateHandler: (event) => {
        seen.revalidate.push(event);
        return Promise.resolve({
          statusCode: 202,
          headers: { 'content-type': 'application/json' },
          body: '{"status":"accepted"}',
        });
      },
      port: 0,
      tenantHeader: undefined,
      functionTimeoutMs: 30_000,
      onError: () => undefined,
    });
    fronts.push(started);
    return { url: started.url, seen };
  }

  it('hands the revalidate handler the raw body and the headers it needs, nothing else', async () => {
    const { url, seen } = await withRevalidation();
    const body = '{ "paths": ["/caf\u00e9"],  "tags": ["x"] }';
    const response = await fetch(`${url}/_isr/revalidate`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': 'evt-1',
        'x-isr-signature': 'sha256=00',
        'x-isr-timestamp': '1800000000',
        cookie: 'session=1',
        'x-forwarded-host': 'evil.example',
      },
      body,
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('{"status":"accepted"}');
    expect(seen.origin).toEqual([]);
    const [event] = seen.revalidate;
    expect(event?.body).toBe(body);
    expect(event?.requestContext.http.method).toBe('POST');
    expect(event?.headers).toEqual({
      host: 'origin.lambda-url.localhost',
      'content-type': 'application/json',
      'idempotency-key': 'evt-1',
      'x-isr-signature': 'sha256=00',
      'x-isr-timestamp': '1800000000',
    });
  });

  it('leaves every other path to the origin, and the path to the origin when not served', async () => {
    const { url, seen } = await withRevalidation();
    expect((await fetch(`${url}/_isr/revalidate-not`)).status).toBe(200);
    expect(seen.origin.map((event) => event.rawPath)).toEqual(['/_isr/revalidate-not']);
    const plain = await front(answering({ statusCode: 404 }));
    expect((await fetch(`${plain.url}/_isr/revalidate`, { method: 'POST' })).status).toBe(404);
  });
});

describe('startHttpFront: the revalidate handler behind it, signed (ISR_REVALIDATE_SECRET)', () => {
  it('applies a request signed over the raw body it forwards, and refuses one that is not', async () => {
    const clock = new TestClock();
    const h = await createOriginHarness({ renderer: countingRenderer().renderer, clock });
    try {
      const cdn = recordingCdn();
      const rv = createRevalidateHarness(h, {
        cdn,
        secret: new StaticSecretSource('local-key'),
        open: false,
      });
      await h.invoke('/signed');
      const started = await startHttpFront({
        handler: () => Promise.resolve({ statusCode: 200 }),
        revalidateHandler: rv.handler,
        port: 0,
        tenantHeader: undefined,
        functionTimeoutMs: 30_000,
        onError: () => undefined,
      });
      fronts.push(started);
      // Spacing a JSON re-serialisation would lose: the signature is over these exact bytes.
      const body = '{"paths": [ "/signed" ]}';
      const timestamp = String(clock.seconds);
      const post = (headers: Record<string, string>) =>
        fetch(`${started.url}/_isr/revalidate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': 'local-1', ...headers },
          body,
        });
      const unsigned = await post({});
      expect(unsigned.status).toBe(401);
      expect(await unsigned.json()).toEqual({ error: 'unauthorized', reason: 'missing-signature' });
      const signed = await post({
        'x-isr-timestamp': timestamp,
        'x-isr-signature': signatureOf('local-key', {
          timestamp,
          method: 'POST',
          target: '/_isr/revalidate',
          idempotencyKey: 'local-1',
          rawBody: body,
        }),
      });
      expect(signed.status).toBe(202);
      expect(cdn.purges).toHaveLength(1);
      expect((await h.invoke('/signed')).cache).toBe('STALE');
    } finally {
      h.destroy();
    }
  });
});
