import { describe, expect, it } from '@jest/globals';
import { RenderRefusedError } from '../../../lambda/core/errors.js';
import {
  DEFAULT_HEADER_POLICY,
  headersFor304,
  keptHeaders,
} from '../../../lambda/core/response-headers.js';

describe('kept response headers', () => {
  const upstream = {
    'content-security-policy': "default-src 'self'",
    'strict-transport-security': 'max-age=63072000',
    link: '</app.css>; rel=preload; as=style',
    'x-robots-tag': 'noindex',
    'cross-origin-opener-policy': 'same-origin',
    'content-language': 'en',
    'x-powered-by': 'Express',
    server: 'nginx',
  };

  it('keeps every header by default (issue 34: headers as the app meant them)', () => {
    expect(keptHeaders(upstream, DEFAULT_HEADER_POLICY)).toEqual(upstream);
  });

  it('an allow-list still narrows it, prefixes included', () => {
    const keep = ['content-security-policy', 'cross-origin-*', 'link'];
    expect(keptHeaders(upstream, { keep, maxBytes: 1024 })).toEqual({
      'content-security-policy': "default-src 'self'",
      link: '</app.css>; rel=preload; as=style',
      'cross-origin-opener-policy': 'same-origin',
    });
  });

  it('never keeps the deny-list: cookies, hop-by-hop, cache state, internal tag headers', () => {
    const kept = keptHeaders(
      {
        'x-fixture-config': 'headers()',
        'x-fixture-middleware': 'edge',
        'set-cookie': 'a=1',
        connection: 'close',
        'cache-control': 'public, s-maxage=60',
        'cache-status': 'upstream; hit',
        'x-nextjs-cache': 'HIT',
        'x-next-cache-tags': '_N_T_/layout',
        'cache-tag': 'posts',
        'surrogate-key': 'posts',
        'x-isr-cache-tags': 'k',
        'x-middleware-rewrite': '/x',
      },
      { ...DEFAULT_HEADER_POLICY, internal: ['surrogate-key', 'x-isr-cache-tags'] },
    );
    expect(kept).toEqual({ 'x-fixture-config': 'headers()', 'x-fixture-middleware': 'edge' });
  });

  it('never keeps hop-by-hop headers or those the service sets, even when listed', () => {
    const policy = {
      keep: [
        'connection',
        'keep-alive',
        'transfer-encoding',
        'cache-control',
        'etag',
        'set-cookie',
        'x-isr-cache',
        'x-hop',
        'x-ok',
      ],
      maxBytes: 1024,
    };
    const kept = keptHeaders(
      {
        connection: 'keep-alive, x-hop',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        'cache-control': 'public',
        etag: '"x"',
        'set-cookie': 'a=b',
        'x-isr-cache': 'HIT',
        'x-hop': 'declared hop-by-hop by Connection',
        'x-ok': 'yes',
      },
      policy,
    );
    expect(kept).toEqual({ 'x-ok': 'yes' });
  });

  it('refuses a page whose kept headers are over the size bound, rather than dropping its CSP', () => {
    const policy = { keep: ['content-security-policy'], maxBytes: 100 };
    expect(() => keptHeaders({ 'content-security-policy': 'x'.repeat(200) }, policy)).toThrow(
      RenderRefusedError,
    );
  });

  it('repeats security headers on a 304 but not representation metadata', () => {
    const kept = keptHeaders(upstream, DEFAULT_HEADER_POLICY) ?? {};
    const on304 = headersFor304(kept);
    expect(on304['content-security-policy']).toBe("default-src 'self'");
    expect(on304['content-language']).toBeUndefined();
    expect(on304.link).toBeUndefined();
  });
});
