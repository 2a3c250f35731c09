import { describe, expect, it } from '@jest/globals';
import {
  forwardedAnswerHeaders,
  forwardedRequestHeaders,
} from '../../../lambda/core/forwarding.js';

describe('what a pass-through forwards', () => {
  it('drops hop-by-hop headers, those Connection names, privileged and internal ones', () => {
    const kept = forwardedRequestHeaders(
      [
        ['Cookie', 's=1'],
        ['authorization', 'Bearer t'],
        ['connection', 'keep-alive, X-Custom-Hop'],
        ['x-custom-hop', '1'],
        ['transfer-encoding', 'chunked'],
        ['upgrade', 'websocket'],
        ['host', 'viewer.example'],
        ['x-middleware-subrequest', 'a:b'],
        ['x-prerender-revalidate', 'k'],
        ['x-invoke-path', '/x'],
        ['x-matched-path', '/x'],
        ['x-now-route-matches', '1'],
        ['x-isr-regeneration', '1'],
        ['x-origin-secret', 'forged'],
        ['x-tenant', 'other'],
        ['accept-encoding', 'gzip'],
      ],
      ['X-Origin-Secret', 'x-tenant'],
    );
    expect(kept).toEqual([
      ['cookie', 's=1'],
      ['authorization', 'Bearer t'],
      ['accept-encoding', 'gzip'],
    ]);
  });

  it("keeps the answer's headers but hop-by-hop ones, repeated Set-Cookie included", () => {
    expect(
      forwardedAnswerHeaders([
        ['Set-Cookie', 'a=1'],
        ['set-cookie', 'b=2'],
        ['Transfer-Encoding', 'chunked'],
        ['Keep-Alive', 'timeout=5'],
        ['content-encoding', 'br'],
      ]),
    ).toEqual([
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['content-encoding', 'br'],
    ]);
  });
});
