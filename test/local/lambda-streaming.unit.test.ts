/**
 * The local stand-in of Lambda's response streaming (`local/lambda-streaming.ts`) held to the
 * runtime interface client it follows: `streamifyResponse` marks the handler, the stream of
 * `HttpResponseStream.from` carries a JSON prelude and 8 null bytes before the body, the content
 * type is fixed at the first write; and the function URL's reading of that stream: the prelude
 * as status, headers and cookies, the rest as the body, a plain stream as a 200 of its type.
 */
import { describe, expect, it } from '@jest/globals';
import type { Context } from 'aws-lambda';
import {
  HTTP_INTEGRATION_CONTENT_TYPE,
  HttpResponseStream,
  installLambdaStreaming,
  invokeStreaming,
  isStreamingHandler,
  ResponseStream,
  type StreamingHandler,
} from '../../local/lambda-streaming.js';
import { functionUrlEvent } from '../../local/function-url.js';
import { lambdaContext } from '../../local/worker-poller.js';

installLambdaStreaming();
/** `awslambda.streamifyResponse`, as a handler's module calls it. */
const awslambda = {
  streamifyResponse: (handler: StreamingHandler): StreamingHandler =>
    (
      globalThis as unknown as {
        awslambda: { streamifyResponse: (handler: StreamingHandler) => StreamingHandler };
      }
    ).awslambda.streamifyResponse(handler),
};
const event = functionUrlEvent({ method: 'GET', target: '/', headers: {} });
const context: Context = lambdaContext(30_000);

async function text(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

describe('the runtime side: streamifyResponse and HttpResponseStream.from', () => {
  it('marks the handler as the runtime reads it', () => {
    const marked = awslambda.streamifyResponse(() => Promise.resolve());
    expect(isStreamingHandler(marked)).toBe(true);
    expect(isStreamingHandler(() => Promise.resolve())).toBe(false);
  });

  it('writes the JSON prelude and 8 null bytes before the first body byte', async () => {
    const stream = HttpResponseStream.from(new ResponseStream(), { statusCode: 201 });
    expect(stream.contentType).toBe(HTTP_INTEGRATION_CONTENT_TYPE);
    stream.write('body');
    stream.end();
    const bytes = Buffer.from(await text(stream));
    const prelude = Buffer.from('{"statusCode":201}');
    expect(bytes.subarray(0, prelude.length)).toEqual(prelude);
    expect(bytes.subarray(prelude.length, prelude.length + 8)).toEqual(Buffer.alloc(8));
    expect(bytes.subarray(prelude.length + 8).toString()).toBe('body');
  });

  it('refuses a content type once the first byte is written', () => {
    const stream = new ResponseStream();
    stream.write('x');
    expect(() => stream.setContentType('text/plain')).toThrow(/too late/);
  });
});

describe('the function URL side: invokeStreaming', () => {
  it('answers with the prelude, the body streaming behind it', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handler = awslambda.streamifyResponse(async (_event, stream) => {
      const http = HttpResponseStream.from(stream, {
        statusCode: 203,
        headers: { 'Content-Type': 'text/html' },
        cookies: ['a=1', 'b=2'],
      });
      http.write('<p>first</p>');
      await gate;
      http.end('<p>rest</p>');
    });
    // Resolves with the headers while the handler still waits on its gate.
    const answer = await invokeStreaming(handler, event, context);
    expect(answer).toMatchObject({
      status: 203,
      headers: { 'content-type': 'text/html' },
      cookies: ['a=1', 'b=2'],
    });
    const reader = (answer.body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    expect(Buffer.from((await reader.next()).value as Uint8Array).toString()).toBe('<p>first</p>');
    release();
    expect(Buffer.from((await reader.next()).value as Uint8Array).toString()).toBe('<p>rest</p>');
  });

  it('negative control: a stream without the prelude is a 200 of its own content type', async () => {
    const handler = awslambda.streamifyResponse((_event, stream) => {
      stream.setContentType('text/plain');
      stream.end('{"statusCode":404}');
      return Promise.resolve();
    });
    const answer = await invokeStreaming(handler, event, context);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain');
    expect(await text(answer.body)).toBe('{"statusCode":404}');
  });

  it('a handler that fails before its first byte is a 502', async () => {
    const handler = awslambda.streamifyResponse(() => Promise.reject(new Error('boom')));
    const answer = await invokeStreaming(handler, event, context);
    expect(answer.status).toBe(502);
  });
});
