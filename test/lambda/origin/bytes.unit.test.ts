import { gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { toFunctionUrlResult, toPageRequest } from '../../../lambda/origin/handler.js';
import type { PageResponse } from '../../../lambda/core/serve/responses.js';
import { functionUrlEvent } from '../../../local/function-url.js';

const response = (type: string, body: Uint8Array, extra: Record<string, string> = {}) =>
  ({
    status: 200,
    headers: { 'content-type': type, ...extra },
    body,
    decision: 'new',
    cacheKeyHash: undefined,
  }) satisfies PageResponse;

const decoded = (result: ReturnType<typeof toFunctionUrlResult>) =>
  Buffer.from(result.body ?? '', result.isBase64Encoded === true ? 'base64' : 'utf8');

describe('bodies are bytes end to end (issue 19 item 7)', () => {
  it('sends a Latin-1 page as base64, so its bytes survive', () => {
    const latin1 = Buffer.from('caf\xe9', 'latin1');
    const result = toFunctionUrlResult(response('text/html; charset=iso-8859-1', latin1), false);
    expect(result.isBase64Encoded).toBe(true);
    expect(decoded(result).equals(latin1)).toBe(true);
  });

  it('sends text that is not valid UTF-8 as base64 even without a charset', () => {
    const bytes = Buffer.from([0x3c, 0x70, 0x3e, 0xff, 0xfe]);
    expect(decoded(toFunctionUrlResult(response('text/html', bytes), false)).equals(bytes)).toBe(
      true,
    );
  });

  it('sends a gzip text body as base64, untouched', () => {
    const gz = gzipSync('<p>x</p>');
    const result = toFunctionUrlResult(
      response('text/html', gz, { 'content-encoding': 'gzip' }),
      false,
    );
    expect(result.isBase64Encoded).toBe(true);
    expect(decoded(result).equals(gz)).toBe(true);
  });

  it('sends UTF-8 text as text (control)', () => {
    const result = toFunctionUrlResult(
      response('text/html; charset=utf-8', Buffer.from('café ✓')),
      false,
    );
    expect(result).toMatchObject({ body: 'café ✓', isBase64Encoded: false });
  });

  it('returns each Set-Cookie of a pass-through as its own entry', () => {
    const result = toFunctionUrlResult(
      { ...response('text/html', Buffer.from('')), cookies: ['a=1', 'b=2; Path=/'] },
      false,
    );
    expect(result.cookies).toEqual(['a=1', 'b=2; Path=/']);
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
