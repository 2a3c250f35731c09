import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import { encodeIntent } from '../../../../lambda/core/page/intent.js';
import type { CdnPurge } from '../../../../lambda/core/page/ports.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import { revalidate } from '../../../../lambda/core/revalidate/revalidation.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { NEXT_VARIANT_HEADERS } from '../../../../lambda/core/settings/presets.js';
import {
  admitVariant,
  nextRscParamOf,
  normaliseVariant,
  variantQueryOf,
  variantRuleProblems,
  variantTagOf,
} from '../../../../lambda/core/page/variants.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import { message } from '../../../helpers/worker-harness.js';

const rules = NEXT_VARIANT_HEADERS;
const keyPolicy = { allowedQueryParams: ['page'], variants: rules };
const TREE = { rsc: '1', 'next-router-prefetch': '1', 'next-router-segment-prefetch': '/_tree' };

describe('normaliseVariant', () => {
  it('keeps only the configured headers, sorted by name, values encoded', () => {
    const variant = normaliseVariant(
      { ...TREE, cookie: 'session=1', 'next-router-state-tree': '%5B%5D', accept: '*/*' },
      rules,
    );
    expect(variant).toBe('next-router-prefetch=1&next-router-segment-prefetch=%2F_tree&rsc=1');
    expect(normaliseVariant({ cookie: 'a=1' }, rules)).toBe('');
  });

  it.each([
    ['a value outside a closed set', { rsc: '2' }],
    ['a prefetch value Next treats as absent', { rsc: '1', 'next-router-prefetch': '0' }],
    ['a character outside the charset', { rsc: '1', 'next-router-segment-prefetch': '/a b' }],
    ['a value over maxLength', { rsc: '1', 'next-router-segment-prefetch': `/${'a'.repeat(256)}` }],
  ])('refuses %s with variant-out-of-bounds', (_name, headers) => {
    expect(() => normaliseVariant(headers, rules)).toThrow(
      expect.objectContaining({ reason: 'variant-out-of-bounds' }),
    );
  });

  it('accepts the bounds themselves (negative control for each refusal above)', () => {
    expect(normaliseVariant({ rsc: '1', 'next-router-prefetch': '3' }, rules)).not.toBe('');
    const longest = `/${'a'.repeat(255)}`;
    expect(normaliseVariant({ rsc: '1', 'next-router-segment-prefetch': longest }, rules)).toBe(
      `next-router-segment-prefetch=${encodeURIComponent(longest)}&rsc=1`,
    );
    expect(
      normaliseVariant({ 'next-router-segment-prefetch': '/posts/$d$slug/@modal/!YWI' }, rules),
    ).toContain('%24d%24slug');
  });

  it('refuses rules that could not bound a value', () => {
    expect(variantRuleProblems({ name: 'rsc' }, 'rule')).toHaveLength(1);
    expect(variantRuleProblems({ name: 'x', charset: 'a-z]|.*' }, 'rule')).toHaveLength(1);
    expect(variantRuleProblems({ name: 'x-isr-secret', values: ['1'] }, 'rule')).toHaveLength(1);
    expect(variantRuleProblems({ name: 'cookie', values: ['1'] }, 'rule')).toHaveLength(1);
    expect(variantRuleProblems({ name: 'x', values: ['1'], maxLength: 1000 }, 'rule')).toHaveLength(
      1,
    );
    for (const rule of rules) expect(variantRuleProblems(rule, 'rule')).toEqual([]);
  });
});

describe('a variant cache key', () => {
  it('is derived from the page key; the page key and its META row stay as they were', () => {
    const page = normaliseCacheKey({ rawPath: '/isr' }, keyPolicy);
    const plain = normaliseCacheKey({ rawPath: '/isr' }, { allowedQueryParams: ['page'] });
    expect(page).toEqual(plain);
    const rsc = normaliseCacheKey({ rawPath: '/isr', variantHeaders: { rsc: '1' } }, keyPolicy);
    expect(rsc).toMatchObject({ key: '/isr#rsc=1', variant: 'rsc=1', pageHash: page.hash });
    expect(rsc.pk).not.toBe(page.pk);
  });

  it('never includes a viewer _rsc: made-up values share one key', () => {
    const keys = ['_rsc=abc', '_rsc=zzzzzzzzzz', '_rsc', ''].map(
      (rawQueryString) =>
        normaliseCacheKey(
          { rawPath: '/isr', rawQueryString, variantHeaders: { rsc: '1' } },
          keyPolicy,
        ).pk,
    );
    expect(new Set(keys).size).toBe(1);
  });
});

describe('_rsc as Next computes it', () => {
  it('is empty for a plain navigation, a 16-character hash otherwise', () => {
    expect(variantQueryOf('rsc=1', 'next-rsc')).toBe('_rsc');
    expect(variantQueryOf('rsc=1', 'none')).toBe('');
    const tree = normaliseVariant(TREE, rules);
    expect(variantQueryOf(tree, 'next-rsc')).toBe(`_rsc=${nextRscParamOf(TREE)}`);
    expect(nextRscParamOf(TREE)).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });
});

describe('admitVariant', () => {
  const variantKey = { variant: 'rsc=1', pageHash: 'ab'.repeat(32) };
  it('never keeps a variant 404 (an unknown segment prefetch), but keeps a page 404', () => {
    expect(() => admitVariant({ status: 404, tags: [] }, variantKey)).toThrow(
      expect.objectContaining({ reason: 'variant-not-found' }),
    );
    expect(admitVariant({ status: 404, tags: [] }, {})).toEqual({ status: 404, tags: [] });
  });

  it('indexes a variant under its page variant tag, within the 49 tags', () => {
    const many = Array.from({ length: 49 }, (_v, i) => `t${i}`);
    const admitted = admitVariant({ status: 200, tags: many }, variantKey);
    expect(admitted.tags).toHaveLength(49);
    expect(admitted.tags.at(-1)).toBe(variantTagOf(variantKey.pageHash));
  });
});

describe('variants through the origin, the worker and a revalidation (unit)', () => {
  function setup() {
    const counter = countingRenderer((request, call) => ({
      ...htmlPage(`<p>${request.cacheKey.key} #${call}</p>`, { revalidateSeconds: 60 }),
      tags: ['posts'],
    }));
    const service = memoryService({ renderer: counter.renderer, keyPolicy });
    const get = (headers: Record<string, string> = {}, rawQueryString = '') =>
      servePage(service.originDeps, {
        method: 'GET',
        rawPath: '/isr',
        rawQueryString,
        tenant: undefined,
        ifNoneMatch: undefined,
        variantHeaders: headers,
      });
    const purges: string[][] = [];
    const cdn = {
      invalidateTags: (tags: readonly string[]): Promise<CdnPurge> => {
        purges.push([...tags]);
        return Promise.resolve({ status: 'submitted', invalidationIds: ['I1'] });
      },
    };
    const revalidationDeps = { ...service, cdn, deployId: 'd1' };
    return { ...service, counter, get, purges, revalidationDeps };
  }

  it('caches each variant apart (second request HIT) and answers Vary for the variant headers', async () => {
    const ctx = setup();
    await ctx.get();
    await ctx.get({ rsc: '1' }, '_rsc=made-up');
    const hit = await ctx.get({ rsc: '1' }, '_rsc=other');
    expect(hit.cacheStatus).toBe('HIT');
    expect(new TextDecoder().decode(hit.body)).toContain('/isr#rsc=1 #2');
    expect(hit.headers.vary).toBe('rsc, next-router-prefetch, next-router-segment-prefetch');
    expect((await ctx.get()).headers.vary).toBe(hit.headers.vary);
    expect(ctx.counter.calls).toBe(2);
  });

  it('answers an out-of-bound variant with 400 and its reason, without a read or a render', async () => {
    const ctx = setup();
    const reply = await ctx.get({ rsc: '1', 'next-router-segment-prefetch': '<script>' });
    expect(reply).toMatchObject({ status: 400, decision: 'variant-out-of-bounds' });
    expect(ctx.counter.calls).toBe(0);
  });

  it('a stale variant is regenerated by the worker under the same variant key', async () => {
    const ctx = setup();
    await ctx.get({ rsc: '1' });
    ctx.clock.advance(61);
    expect((await ctx.get({ rsc: '1' })).cacheStatus).toBe('STALE');
    const [queued] = ctx.queue.drain();
    expect(queued.intent).toMatchObject({ path: '/isr', variant: 'rsc=1' });
    await processMessage(ctx.workerDeps, message('m-1', encodeIntent(queued.intent)));
    expect(ctx.counter.callsFor('/isr#rsc=1')).toBe(2);
    expect((await ctx.get({ rsc: '1' })).cacheStatus).toBe('HIT');
  });

  it('a revalidation of the path marks every variant, and purges them at the CDN', async () => {
    const ctx = setup();
    await ctx.get();
    await ctx.get({ rsc: '1' });
    await ctx.get(TREE);
    const key = ctx.keyFor('/isr');
    const effect = await revalidate(ctx.revalidationDeps, {
      tenant: undefined,
      keys: [key],
      tags: [],
      mode: 'stale',
      regenerate: false,
      effectId: 'rv_1',
    });
    expect(effect.pages).toBe(3);
    expect((await ctx.get({ rsc: '1' })).cacheStatus).toBe('STALE');
    expect((await ctx.get(TREE)).cacheStatus).toBe('STALE');
    // The variants carry their page's key tag: one CDN purge of the path reaches them all.
    const rsc = await ctx.get({ rsc: '1' });
    expect(rsc.headers['x-isr-cache-tags']).toContain(ctx.purges[0][0]);
  });

  it('a revalidation by tag marks every variant carrying the tag', async () => {
    const ctx = setup();
    await ctx.get();
    await ctx.get({ rsc: '1' });
    const effect = await revalidate(ctx.revalidationDeps, {
      tenant: undefined,
      keys: [],
      tags: ['posts'],
      mode: 'expire',
      regenerate: true,
      effectId: 'rv_2',
    });
    expect(effect).toMatchObject({ pages: 2, regenerations: 2 });
    const intents = ctx.queue.drain().map((queued) => queued.intent);
    expect(intents.map((intent) => intent.variant)).toEqual(
      expect.arrayContaining([undefined, 'rsc=1']),
    );
  });
});
