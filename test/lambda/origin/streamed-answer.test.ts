/**
 * Negative controls of the origin harness on what only the streaming path can get wrong. The
 * deployed origin answers through a RESPONSE_STREAM function URL: status, headers and cookies go
 * in a prelude written before the first body byte, and the runtime refuses a content type after
 * it ("Cannot set content-type, too late", src/ResponseStream.js of
 * aws-lambda-nodejs-runtime-interface-client; "Invoking a response streaming enabled function
 * using Lambda function URLs", https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html).
 * Each check passes on the origin as built and fails, through the same harness, on a copy with
 * one streaming defect: headers written after the first chunk, a Set-Cookie lost from the prelude.
 * A handler that throws is a 502 at the function URL, which a test's status check could take for
 * the origin's own 502: the harness fails the test with the error instead.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { StreamingOrigin } from '../../../local/cloudfront/origins.js';
import { HttpResponseStream, invokeStreaming } from '../../../local/lambda-streaming.js';
import { TestClock } from '../../helpers/clock.js';
import { startHttpServer } from '../../helpers/http-server.js';
import { createOriginHarness, type OriginHarness } from '../../helpers/origin-harness.js';
import { marked, rewritten } from '../../helpers/streaming-origin.js';

const COOKIES = ['sid=1; Path=/; HttpOnly', 'theme=dark; Path=/'];

let upstream: Awaited<ReturnType<typeof startHttpServer>>;
let h: OriginHarness;

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    if (req.method === 'POST') {
      res.writeHead(200, {
        'content-type': 'text/html',
        'cache-control': 'private, no-store',
        'set-cookie': COOKIES,
      });
      res.end('<p>posted</p>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 's-maxage=60' });
    res.end(`<p>page ${req.url}</p>`);
  });
  h = await createOriginHarness({
    renderer: undefined,
    clock: new TestClock(),
    env: { RENDER_ORIGIN_URL: upstream.url },
  });
});
afterAll(async () => {
  h.destroy();
  await upstream.close();
});

/** Defect: the body's first chunk goes out before the prelude (headers set after it). */
const preludeAfterFirstChunk = (origin: StreamingOrigin): StreamingOrigin => ({
  streaming: marked(async (event, stream, context) => {
    const answer = await invokeStreaming(origin.streaming, event, context);
    for await (const chunk of answer.body) stream.write(chunk);
    HttpResponseStream.from(stream, { statusCode: answer.status, headers: answer.headers });
    stream.end();
  }),
});

/** Defect: the prelude leaves out the pass's cookies. */
const cookiesLost = (origin: StreamingOrigin): StreamingOrigin =>
  rewritten(origin, (answer) => ({ ...answer, cookies: [] }));

/** Defect: the handler throws before its prelude. */
const crashing: StreamingOrigin = {
  streaming: marked(() => Promise.reject(new Error('boom in the handler'))),
};

/** What a test of a stored page asserts: its status, type, cache decision and bytes. */
async function expectPageArrives(path: string, handler?: StreamingOrigin): Promise<void> {
  const reply = await h.invoke(path, { handler });
  expect(reply).toMatchObject({ status: 200, cache: 'MISS', text: `<p>page ${path}</p>` });
  expect(reply.headers['content-type']).toBe('text/html');
}

/** What a test of a pass asserts: each Set-Cookie of the upstream reaches the viewer. */
async function expectCookiesArrive(handler?: StreamingOrigin): Promise<void> {
  const reply = await h.invoke('/form', { method: 'POST', handler });
  expect(reply).toMatchObject({ status: 200, cache: 'PASS', text: '<p>posted</p>' });
  expect(reply.cookies).toEqual(COOKIES);
}

describe('the harness reads the origin as its function URL streams it', () => {
  it('a stored page arrives with its prelude before its body', async () => {
    await expectPageArrives('/first');
  });

  it('negative control: headers written after the first chunk fail the same check', async () => {
    // The runtime refuses the late prelude; the viewer got 200 octet-stream and a cut body.
    await expect(expectPageArrives('/late', preludeAfterFirstChunk(h.handler))).rejects.toThrow(
      /too late/,
    );
  });

  it("a pass's cookies arrive, each its own entry of the prelude", async () => {
    await expectCookiesArrive();
  });

  it('negative control: a cookie lost from the prelude fails the same check', async () => {
    await expect(expectCookiesArrive(cookiesLost(h.handler))).rejects.toThrow(/sid=1/);
  });

  it('a handler that throws fails the test with its error, not as a 502 to assert on', async () => {
    const thrown = await h.invoke('/crash', { handler: crashing }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).message).toMatch(/origin handler threw/);
    expect(((thrown as Error).cause as Error).message).toBe('boom in the handler');
    // Where a test expects the crash, it sees what the function URL answers.
    const reply = await h.invoke('/crash', { handler: crashing, crashes: 'expected' });
    expect(reply.status).toBe(502);
    // Negative control: the origin as built does not throw on the same request.
    await expectPageArrives('/crash');
  });
});
