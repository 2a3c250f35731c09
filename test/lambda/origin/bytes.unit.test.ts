/**
 * Bodies are bytes end to end (issue 19 item 7), on the deployed origin's RESPONSE_STREAM
 * function URL: the answer is a prelude (status, headers, cookies) then raw body bytes. A
 * streamed function URL has no `isBase64Encoded`: the bytes the function writes are the bytes the
 * client gets ("Invoking a response streaming enabled function using Lambda function URLs",
 * https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html), so a Latin-1, a
 * non-UTF-8 or a gzip body needs no base64 step (the buffered URL needed one) and must arrive as is.
 */
import { gzipSync } from 'node:zlib';
import middy from '@middy/core';
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { PageResponse } from '../../../lambda/core/serve/responses.js';
import { toPageRequest } from '../../../lambda/origin/handler.js';
import { toStreamedResult } from '../../../lambda/origin/streaming.js';
import { installLambdaStreaming, type StreamingHandler } from '../../../local/lambda-streaming.js';
import { functionUrlEvent } from '../../../local/function-url.js';
import { fixedContext } from '../../helpers/memory-service.js';
import { invokeCollected } from '../../helpers/streaming-origin.js';

const response = (type: string, body: Uint8Array, extra: Record<string, string> = {}) =>
  ({
    status: 200,
    headers: { 'content-type': type, ...extra },
    body,
    decision: 'new',
    cacheKeyHash: undefined,
  }) satisfies PageResponse;

beforeAll(() => installLambdaStreaming());

/** `response` as the streaming origin writes it (middy's streamifyResponse), read by the URL. */
async function delivered(page: PageResponse, method = 'GET') {
  const written = () => Promise.resolve(toStreamedResult(page, method === 'HEAD', () => undefined));
  const handler = middy(written, { streamifyResponse: true }) as unknown as StreamingHandler;
  const event = functionUrlEvent({ method, target: '/p', headers: {} });
  return invokeCollected({ streaming: handler }, event, fixedContext(30_000, 'isr-origin'));
}

describe('bodies are bytes end to end (issue 19 item 7)', () => {
  it('sends a Latin-1 page byte for byte', async () => {
    const latin1 = Buffer.from('caf\xe9', 'latin1');
    const answer = await delivered(response('text/html; charset=iso-8859-1', latin1));
    expect(answer.body.equals(latin1)).toBe(true);
    expect(answer.headers['content-type']).toBe('text/html; charset=iso-8859-1');
  });

  it('sends text that is not valid UTF-8 byte for byte, without a charset', async () => {
    const bytes = Buffer.from([0x3c, 0x70, 0x3e, 0xff, 0xfe]);
    expect((await delivered(response('text/html', bytes))).body.equals(bytes)).toBe(true);
  });

  it('sends a gzip text body untouched, its encoding in the prelude', async () => {
    const gz = gzipSync('<p>x</p>');
    const answer = await delivered(response('text/html', gz, { 'content-encoding': 'gzip' }));
    expect(answer.body.equals(gz)).toBe(true);
    expect(answer.headers['content-encoding']).toBe('gzip');
  });

  it('sends UTF-8 text as its bytes (control)', async () => {
    const answer = await delivered(response('text/html; charset=utf-8', Buffer.from('café ✓')));
    expect(answer.body.toString('utf8')).toBe('café ✓');
  });

  it('sends the status and headers but no body to a HEAD', async () => {
    const answer = await delivered(response('text/html', Buffer.from('<p>x</p>')), 'HEAD');
    expect(answer).toMatchObject({ statusCode: 200, headers: { 'content-type': 'text/html' } });
    expect(answer.body.length).toBe(0);
  });

  it('returns each Set-Cookie of a pass-through as its own entry of the prelude', async () => {
    const answer = await delivered({
      ...response('text/html', Buffer.from('')),
      cookies: ['a=1', 'b=2; Path=/'],
    });
    expect(answer.cookies).toEqual(['a=1', 'b=2; Path=/']);
  });

  it("reads the viewer's cookies (listed apart in payload 2.0) and a base64 body", () => {
    const event = {
      ...functionUrlEvent({ method: 'POST', target: '/f?x=1', headers: { 'x-a': '1' } }),
      cookies: ['a=1', 'b=2'],
      body: Buffer.from([0xff, 0x00]).toString('base64'),
      isBase64Encoded: true,
    };
    const request = toPageRequest(event, undefined);
    expect(request.headers).toContainEqual(['cookie', 'a=1; b=2']);
    expect(request.headers).toContainEqual(['x-a', '1']);
    expect(Buffer.from(request.body ?? []).equals(Buffer.from([0xff, 0x00]))).toBe(true);
  });
});
