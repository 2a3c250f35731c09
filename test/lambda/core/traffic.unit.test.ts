import { describe, expect, it } from '@jest/globals';
import {
  cacheDirectives,
  classifyAnswer,
  type Answer,
  type AnswerPolicy,
} from '../../../lambda/core/traffic.js';

const policy: AnswerPolicy = { cacheableContentTypes: ['text/html'] };
const answer = (extra: Partial<Answer> & { cc?: string } = {}): Answer => {
  const { cc, ...rest } = extra;
  return {
    status: 200,
    contentType: 'text/html; charset=utf-8',
    bodyBytes: 10,
    headers: cc === undefined ? {} : { 'cache-control': cc },
    ...rest,
  };
};
const classOf = (extra: Parameters<typeof answer>[0], p: AnswerPolicy = policy) =>
  classifyAnswer(answer(extra), p);

describe('classifyAnswer', () => {
  it.each([
    ['private', 200],
    ['no-store', 200],
    ['no-cache', 200],
    ['private, no-cache, no-store, max-age=0, must-revalidate', 200],
    ['public, no-store', 404],
    ['private="set-cookie", s-maxage=60', 200],
    ['no-cache="set-cookie"', 301],
    ['Private', 301],
  ])('passes an answer marked %s whatever its status (%i)', (cc, status) => {
    expect(classOf({ cc, status })).toEqual({ class: 'pass', reason: 'uncacheable' });
  });

  it('does not mistake other directives for private, no-store or no-cache', () => {
    expect(classOf({ cc: 'must-revalidate, s-maxage=5, x-private-ish=1' })).toEqual({
      class: 'cached',
      freshnessSeconds: 5,
    });
  });

  it('classes an immutable answer as static, on any path, but private still wins', () => {
    const asset = { cc: 'public, max-age=31536000, immutable', contentType: 'text/javascript' };
    expect(classOf(asset)).toEqual({ class: 'static', reason: 'immutable' });
    expect(classOf({ cc: 'private, immutable' })).toEqual({ class: 'pass', reason: 'uncacheable' });
  });

  it.each([
    ['a JSON API answer', { contentType: 'application/json' }],
    ['a 302', { status: 302, location: '/login', bodyBytes: 0, contentType: undefined }],
    ['a 307', { status: 307, location: '/x', bodyBytes: 0, contentType: undefined }],
    ['a 301 with a JSON body', { status: 301, location: '/x', contentType: 'application/json' }],
    ['an image', { contentType: 'image/png' }],
  ])('passes %s with no Cache-Control (nothing heuristically cacheable)', (_what, extra) => {
    expect(classOf(extra)).toEqual({ class: 'pass', reason: 'no-freshness' });
  });

  it.each([
    ['a 200 HTML page', {}],
    ['a 404 page', { status: 404 }],
    ['a 410 page', { status: 410 }],
    ['a body-less 301', { status: 301, location: '/a/', bodyBytes: 0, contentType: undefined }],
    ['a body-less 308', { status: 308, location: '/a', bodyBytes: 0, contentType: undefined }],
  ])('caches %s with no Cache-Control by heuristic, at the default freshness', (_what, extra) => {
    expect(classOf(extra)).toEqual({ class: 'cached', freshnessSeconds: undefined });
  });

  it('reads the content-type list as media types, with text/* matching a family', () => {
    expect(classOf({ contentType: 'TEXT/HTML;charset=x' }).class).toBe('cached');
    const texts = { cacheableContentTypes: ['text/*'] };
    expect(classOf({ contentType: 'text/plain' }, texts).class).toBe('cached');
    expect(classOf({ contentType: 'application/json' }, texts).class).toBe('pass');
  });

  it('caches what states a freshness, at that freshness, even outside the content-type list', () => {
    const json = { contentType: 'application/json' };
    expect(classOf({ ...json, cc: 's-maxage=30' })).toEqual({
      class: 'cached',
      freshnessSeconds: 30,
    });
    expect(classOf({ ...json, cc: 'max-age=7' })).toEqual({ class: 'cached', freshnessSeconds: 7 });
    expect(classOf({ ...json, cc: 'max-age=7, s-maxage=9' })).toMatchObject({
      freshnessSeconds: 9,
    });
    expect(classOf({ ...json, cc: 'public' })).toEqual({
      class: 'cached',
      freshnessSeconds: undefined,
    });
    expect(classOf({ status: 302, location: '/x', bodyBytes: 0, cc: 's-maxage=60' }).class).toBe(
      'cached',
    );
  });

  it('reads max-age=0 as speaking to browsers: the default freshness, if cacheable at all', () => {
    // Astro's prerendered pages: `public, max-age=0`.
    expect(classOf({ cc: 'public, max-age=0' })).toEqual({
      class: 'cached',
      freshnessSeconds: undefined,
    });
    expect(classOf({ cc: 'max-age=0' })).toEqual({ class: 'cached', freshnessSeconds: undefined });
    expect(classOf({ cc: 'max-age=0', contentType: 'application/json' }).class).toBe('pass');
    expect(classOf({ cc: 's-maxage=0' })).toEqual({ class: 'cached', freshnessSeconds: 0 });
  });

  it('reads Expires against the answer’s own Date', () => {
    const date = 'Wed, 25 Nov 2026 10:00:00 GMT';
    const json = (expires: string) =>
      classOf({ contentType: 'application/json', headers: { expires, date } });
    expect(json('Wed, 25 Nov 2026 10:02:00 GMT')).toEqual({
      class: 'cached',
      freshnessSeconds: 120,
    });
    expect(json('Thu, 19 Nov 1981 08:52:00 GMT').class).toBe('pass');
    expect(json('0').class).toBe('pass');
  });

  it('takes an in-process renderer’s own freshness as stated', () => {
    expect(classOf({ contentType: 'application/json', revalidateSeconds: 5 }).class).toBe('cached');
  });

  it.each([
    [401, 's-maxage=60'],
    [403, undefined],
    [405, undefined],
    [400, 'public, max-age=60'],
    [304, undefined],
    [101, undefined],
  ])('passes a %i, which the cache never stores', (status, cc) => {
    expect(classOf({ status, cc })).toEqual({ class: 'pass', reason: 'status' });
  });

  it.each(['*', 'Cookie', 'accept-encoding, authorization'])(
    'passes an answer that varies on the viewer (Vary: %s)',
    (vary) => {
      expect(
        classifyAnswer({ ...answer({ cc: 's-maxage=60' }), headers: { vary } }, policy),
      ).toEqual({ class: 'pass', reason: 'vary' });
    },
  );

  it('passes a redirect whose Location is its own cache key, and only then', () => {
    const own = { ...policy, isOwnKey: (location: string) => location === '/a' };
    const redirect = { status: 301, bodyBytes: 0, contentType: undefined };
    expect(classOf({ ...redirect, location: '/a' }, own)).toEqual({
      class: 'pass',
      reason: 'self-redirect',
    });
    expect(classOf({ ...redirect, location: '/a/' }, own).class).toBe('cached');
    expect(classOf({ ...redirect, location: '/a' }, policy).class).toBe('cached');
  });
});

describe('cacheDirectives', () => {
  it('reads names case-insensitively, values unquoted, commas inside quotes kept', () => {
    const directives = cacheDirectives(
      'Public, Max-Age="60", no-cache="set-cookie, x", s-maxage=5',
    );
    expect([...directives]).toEqual([
      ['public', ''],
      ['max-age', '60'],
      ['no-cache', 'set-cookie, x'],
      ['s-maxage', '5'],
    ]);
  });
});
