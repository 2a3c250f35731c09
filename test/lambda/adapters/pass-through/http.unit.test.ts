import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../../../lambda/adapters/pass-through/http.js';
import { PassFailure, PassThroughError } from '../../../../lambda/core/errors.js';
import type { PassAnswer, PassRequest } from '../../../../lambda/core/serve/ports.js';
import { startHttpServer } from '../../../helpers/http-server.js';

type Server = Awaited<ReturnType<typeof startHttpServer>>;
let server: Server | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = (extra: Partial<PassRequest> = {}): PassRequest => ({
  method: 'GET',
  path: '/p',
  query: '',
  headers: [],
  body: undefined,
  ...extra,
});

async function bytesOf(answer: PassAnswer): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of answer.body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function* chunks(...parts: string[]): AsyncIterable<Uint8Array> {
  for (const part of parts) yield await Promise.resolve(Buffer.from(part));
}

describe('HttpPassThrough', () => {
  it('returns a gzip body as its bytes, never decoded, with its Content-Encoding', async () => {
    const gz = gzipSync('<p>hello</p>');
    server = await startHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gz);
    });
    const pass = new HttpPassThrough({ originUrl: server.url, maxBodyBytes: 100 });
    const answer = await pass.forward(request({ headers: [['accept-encoding', 'gzip']] }));
    expect(answer.headers).toContainEqual(['content-encoding', 'gzip']);
    expect((await bytesOf(answer)).equals(gz)).toBe(true);
    expect(server.seen[0]?.headers['accept-encoding']).toBe('gzip');
  });

  it('keeps each Set-Cookie and the Location, and drops hop-by-hop answer headers', async () => {
    server = await startHttpServer((_req, res) => {
      res.writeHead(303, [
        ['Set-Cookie', 'a=1; Path=/'],
        ['Set-Cookie', 'b=2; HttpOnly'],
        ['Location', '/done'],
        ['Connection', 'close, x-hop'],
        ['X-Hop', 'gone'],
      ]);
      res.end();
    });
    const pass = new HttpPassThrough({ originUrl: server.url, maxBodyBytes: 100 });
    const answer = await pass.forward(request());
    expect(answer.status).toBe(303);
    expect(answer.headers.filter(([name]) => name === 'set-cookie')).toEqual([
      ['set-cookie', 'a=1; Path=/'],
      ['set-cookie', 'b=2; HttpOnly'],
    ]);
    expect(answer.headers).toContainEqual(['location', '/done']);
    expect(answer.headers.map(([name]) => name)).not.toEqual(
      expect.arrayContaining(['connection']),
    );
    expect(answer.headers.map(([name]) => name)).not.toContain('x-hop');
  });

  it("sends the viewer's method, path, query, cookies and body; never privileged headers; our secret", async () => {
    let received = '';
    server = await startHttpServer((req, res) => {
      req.on('data', (chunk: Buffer) => (received += chunk.toString()));
      req.on('end', () => res.end('ok'));
    });
    const pass = new HttpPassThrough({
      originUrl: server.url,
      maxBodyBytes: 100,
      secretHeader: { name: 'x-origin-secret', secret: { value: () => Promise.resolve('s3') } },
    });
    await bytesOf(
      await pass.forward(
        request({
          method: 'POST',
          path: '/form/',
          query: 'a=1&b=%20',
          headers: [
            ['cookie', 'session=v'],
            ['content-type', 'application/x-www-form-urlencoded'],
            ['x-origin-secret', 'forged'],
            ['x-middleware-subrequest', 'middleware'],
            ['x-isr-regeneration', '1'],
            ['x-invoke-path', '/admin'],
            ['host', 'viewer.example'],
          ],
          body: chunks('a=', '1'),
        }),
      ),
    );
    const seen = server.seen[0];
    expect(seen).toMatchObject({ method: 'POST', url: '/form/?a=1&b=%20' });
    expect(received).toBe('a=1');
    expect(seen.headers.cookie).toBe('session=v');
    expect(seen.headers['x-origin-secret']).toBe('s3');
    expect(seen.headers.host).toBe(new URL(server.url).host);
    for (const name of ['x-middleware-subrequest', 'x-isr-regeneration', 'x-invoke-path'])
      expect(seen.headers[name]).toBeUndefined();
  });

  it('refuses a body over the limit with a 413, buffered or streamed, before the upstream answers', async () => {
    server = await startHttpServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const pass = new HttpPassThrough({ originUrl: server.url, maxBodyBytes: 4 });
    const buffered = pass.forward(request({ method: 'POST', body: Buffer.from('12345') }));
    await expect(buffered).rejects.toMatchObject({ failure: PassFailure.BodyTooLarge });
    expect(server.seen).toHaveLength(0);
    const streamed = pass.forward(request({ method: 'POST', body: chunks('123', '45') }));
    await expect(streamed).rejects.toMatchObject({ failure: PassFailure.BodyTooLarge });
    // Negative control: at the limit, it goes through.
    const fits = await pass.forward(request({ method: 'POST', body: chunks('12', '34') }));
    expect(fits.status).toBe(200);
  });

  it('is a 502 when the upstream cannot be reached, a 504 when the caller aborts (its timeout)', async () => {
    server = await startHttpServer(() => undefined); // never answers
    const gone = new HttpPassThrough({ originUrl: 'http://127.0.0.1:1', maxBodyBytes: 4 });
    await expect(gone.forward(request())).rejects.toMatchObject({
      failure: PassFailure.Unreachable,
    });
    const abort = new AbortController();
    const slow = new HttpPassThrough({ originUrl: server.url, maxBodyBytes: 4 });
    const pending = slow.forward(request({ signal: abort.signal }));
    abort.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PassThroughError);
    expect(error).toMatchObject({ failure: PassFailure.Timeout });
  });
});
