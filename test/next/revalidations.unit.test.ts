import { describe, expect, it } from '@jest/globals';
import { parseRevalidateBody } from '../../lambda/core/revalidate/request.js';
import { revalidationBodiesOf } from '../../next/revalidations.js';

/** The endpoint's own parser with its defaults: every body the adapter sends must pass it. */
const POLICY = {
  keyPolicy: { allowedQueryParams: [] },
  tenancy: undefined,
  maxPaths: 100,
  maxTags: 100,
};

describe('revalidationBodiesOf: what the app calls become', () => {
  // The handler calls are those next start makes (docs: /work/notes, test/next/cache-handler.test.ts).
  it.each([
    [
      "revalidateTag('posts', 'max')",
      ['posts'],
      { expire: 31536000 },
      { tags: ['posts'], mode: 'stale', regenerate: true },
    ],
    [
      "revalidateTag('posts', 'hours')",
      ['posts'],
      { expire: 86400 },
      { tags: ['posts'], mode: 'stale', regenerate: true },
    ],
    [
      "revalidateTag('posts', { expire: 0 })",
      ['posts'],
      { expire: 0 },
      { tags: ['posts'], mode: 'expire' },
    ],
    ["updateTag('posts')", ['posts'], undefined, { tags: ['posts'], mode: 'expire' }],
    [
      "revalidatePath('/isr')",
      ['_N_T_/isr'],
      undefined,
      { paths: ['/isr'], tags: ['_N_T_/isr'], mode: 'expire' },
    ],
    [
      "revalidatePath('/')",
      ['_N_T_/', '_N_T_/index'],
      undefined,
      { paths: ['/'], tags: ['_N_T_/', '_N_T_/index'], mode: 'expire' },
    ],
    [
      "revalidatePath('/posts/[slug]', 'page')",
      ['_N_T_/posts/[slug]/page'],
      undefined,
      { tags: ['_N_T_/posts/[slug]/page'], mode: 'expire' },
    ],
    [
      "revalidatePath('/', 'layout')",
      ['_N_T_/layout'],
      undefined,
      { tags: ['_N_T_/layout'], mode: 'expire' },
    ],
    [
      'a tag the CDN cannot carry',
      'my tag',
      { expire: 60 },
      { tags: [expect.stringMatching(/^next-hash:/)], mode: 'stale', regenerate: true },
    ],
  ])('%s: %j %j', (_call, tags, durations, body) => {
    const bodies = revalidationBodiesOf(tags, durations, undefined);
    expect(bodies).toEqual([body]);
    expect(() => parseRevalidateBody(JSON.stringify(bodies[0]), POLICY)).not.toThrow();
  });

  it('revalidates a tag holding a comma by its parts too: Next splits it on the page', () => {
    const [body] = revalidationBodiesOf(['a,b'], undefined, undefined);
    expect(body?.tags).toEqual([expect.stringMatching(/^next-hash:/), 'a', 'b']);
  });

  it('names the tenant when one is configured', () => {
    expect(revalidationBodiesOf(['posts'], undefined, 'acme')).toEqual([
      { tags: ['posts'], tenant: 'acme', mode: 'expire' },
    ]);
  });

  it('splits lists past the endpoint limit of 100 into several requests', () => {
    const tags = Array.from({ length: 150 }, (_, i) => `_N_T_/p${i}`);
    const bodies = revalidationBodiesOf(tags, { expire: 60 }, undefined);
    expect(bodies.map((body) => [body.paths?.length, body.tags?.length])).toEqual([
      [100, 100],
      [50, 50],
    ]);
    expect(bodies.every((body) => body.mode === 'stale')).toBe(true);
  });
});
