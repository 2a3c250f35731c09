import { describe, expect, it } from '@jest/globals';
import { pageTags, tagProblem } from '../../lambda/core/page/cache-tags.js';
import { pageTagsOf, pathOfSoftTag, serviceTagOf } from '../../next/tags.js';

/** What next start hands set() for /isr (test/next/cache-handler.test.ts pins it). */
const ISR_TAGS = '_N_T_/layout,_N_T_/isr/layout,_N_T_/isr/page,_N_T_/isr,posts,post:hello';

describe('serviceTagOf', () => {
  it('keeps a tag the CDN can carry as it is (the service lower-cases it)', () => {
    for (const tag of ['posts', 'post:hello', 'Posts', '_N_T_/posts/[slug]/page', 'caf%C3%A9']) {
      expect(serviceTagOf(tag)).toBe(tag);
    }
  });

  it('carries any other tag as a digest of its exact text, which the service accepts', () => {
    const tags = ['my tag', 'a,b', 'café', `_N_T_/${'x'.repeat(200)}`, 'Café', ''];
    const mapped = tags.map(serviceTagOf);
    for (const tag of mapped) {
      expect(tag).toMatch(/^next-hash:[0-9a-f]{32}$/);
      expect(tagProblem(tag)).toBeUndefined();
    }
    expect(new Set(mapped).size).toBe(tags.length);
    expect(serviceTagOf('my tag')).toBe(mapped[0]);
  });
});

describe('pageTagsOf', () => {
  it("lists the page's own tags first, then its soft tags", () => {
    expect(pageTagsOf(ISR_TAGS)).toEqual([
      'posts',
      'post:hello',
      '_N_T_/layout',
      '_N_T_/isr/layout',
      '_N_T_/isr/page',
      '_N_T_/isr',
    ]);
  });

  it('keeps one of two tags the service cannot tell apart, and at most 49', () => {
    expect(pageTagsOf('Posts,posts,,POSTS')).toEqual(['Posts']);
    const many = Array.from({ length: 60 }, (_, i) => `t${i}`);
    const soft = '_N_T_/layout,_N_T_/a';
    const kept = pageTagsOf([soft, ...many].join(','));
    expect(kept).toHaveLength(49);
    expect(kept[0]).toBe('t0');
    // What the service then keeps from the header is exactly this list, lower-cased.
    expect(pageTags(kept)).toEqual({ kept: kept.map((tag) => tag.toLowerCase()), dropped: [] });
  });
});

describe('pathOfSoftTag', () => {
  it.each([
    ['_N_T_/isr', '/isr'],
    ['_N_T_/', '/'],
    ['_N_T_/index', '/'],
    ['_N_T_/posts/hello', '/posts/hello'],
    ['_N_T_/blog/my-page', '/blog/my-page'],
    ['_N_T_/a b', '/a%20b'],
    ['_N_T_/caf%C3%A9', '/caf%C3%A9'],
  ])('%s names the path %s', (tag, path) => {
    expect(pathOfSoftTag(tag)).toBe(path);
  });

  it.each([
    '_N_T_/layout',
    '_N_T_/isr/layout',
    '_N_T_/isr/page',
    '_N_T_/posts/[slug]/page',
    '_N_T_/posts/[slug]',
    'posts',
    '_N_RP_/en',
  ])('%s names no path (a route, or not a soft tag)', (tag) => {
    expect(pathOfSoftTag(tag)).toBeUndefined();
  });
});
