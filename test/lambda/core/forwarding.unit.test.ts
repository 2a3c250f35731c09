import { describe, expect, it } from '@jest/globals';
import {
  forwardedAnswerHeaders,
  forwardedRequestHeaders,
} from '../../../lambda/core/forwarding.js';

describe('what a pass-through forwards', () => {
  it("drops hop-by-hop headers, those Connection names, the origin access control's signature, privileged and internal ones", () => {
    const kept = forwardedRequestHeaders(
      [
        ['Cookie', 's=1'],
        ['authorization', 'AWS4-HMAC-SHA256 Credential=ASIA.../lambda/aws4_request'],
        ['x-amz-date', '20261128T120000Z'],
        ['x-amz-security-token', 'token'],
        ['x-amz-content-sha256', 'e3b0c442'],
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
