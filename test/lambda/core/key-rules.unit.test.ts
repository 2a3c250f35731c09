/**
 * Per-path cache keys (`core/key-rules.ts`): the Next.js image rule of the `nextjs` preset, in
 * the origin's cache key, the traffic rules and the settings check.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { normaliseCacheKey, type CacheKeyPolicy } from '../../../lambda/core/page/cache-key.js';
import {
  keyParamsVerdict,
  keyRuleProblems,
  normalisedAcceptOf,
  parseKeyRules,
} from '../../../lambda/core/key-rules.js';
import { servePage } from '../../../lambda/core/serve/serve.js';
import { NEXT_IMAGE_RULE } from '../../../lambda/core/settings/presets.js';
import { classifyRequest, type TrafficRules } from '../../../lambda/core/traffic-rules.js';
import { memoryService } from '../../helpers/memory-service.js';
import { countingRenderer } from '../../helpers/renderers.js';

const policy: CacheKeyPolicy = { allowedQueryParams: ['page'], keyRules: [NEXT_IMAGE_RULE] };
const keyOf = (rawQueryString: string, accept?: string) =>
  normaliseCacheKey(
    { rawPath: '/_next/image', rawQueryString, variantHeaders: { accept } },
    policy,
  );

describe('a key rule in the cache key', () => {
  it('keys on its params (sorted, others dropped) and the normalised Accept', () => {
    const key = keyOf('w=64&url=%2Fa.png&q=75&page=2&utm=x', 'image/webp,*/*;q=0.8');
    expect(key.key).toBe('/_next/image?q=75&url=%2Fa.png&w=64#accept=image%2Fwebp%2C*%2F*');
    expect(keyOf('url=/a.png&q=75&w=64', 'image/webp').hash).toBe(key.hash);
    expect(keyOf('url=/a.png&q=75&w=64', 'image/png').hash).not.toBe(key.hash);
    expect(keyOf('url=/a.png&q=75&w=64', 'image/avif').variant).toBe(
      'accept=image%2Favif%2Cimage%2Fwebp%2C*%2F*',
    );
  });

  it.each([
    ['w=0', 'url=/a.png&w=0&q=75'],
    ['w=064 (two keys for one width)', 'url=/a.png&w=064&q=75'],
    ['q=101', 'url=/a.png&w=64&q=101'],
    ['no q', 'url=/a.png&w=64'],
    ['a repeated w', 'url=/a.png&w=64&w=65&q=75'],
    ['an absolute url (the edge passes it)', 'url=https%3A%2F%2Fx.test%2Fa.png&w=64&q=75'],
    ['a space', 'url=/a%20b.png&w=64&q=75'],
  ])('refuses %s with query-out-of-bounds', (_name, query) => {
    expect(() => keyOf(query)).toThrow(expect.objectContaining({ reason: 'query-out-of-bounds' }));
  });

  it('control: another path keeps the allow-list and its variants', () => {
    expect(normaliseCacheKey({ rawPath: '/a', rawQueryString: 'w=0&page=2' }, policy).key).toBe(
      '/a?page=2',
    );
  });

  it('the origin answers a bad w with 400 before any read or render', async () => {
    const counter = countingRenderer(() => htmlPage('<p>x</p>'));
    const service = memoryService({ renderer: counter.renderer, keyPolicy: policy });
    const reads = jest.spyOn(service.cacheTable, 'readPage');
    const ask = (rawQueryString: string) =>
      servePage(service.originDeps, {
        method: 'GET',
        rawPath: '/_next/image',
        rawQueryString,
        tenant: undefined,
        ifNoneMatch: undefined,
      });
    expect((await ask('url=/a.png&w=0&q=75')).status).toBe(400);
    expect(reads).not.toHaveBeenCalled();
    expect(counter.calls).toBe(0);
    await ask('url=/a.png&w=64&q=75'); // control: a good one is read and rendered
    expect(reads).toHaveBeenCalled();
    expect(counter.calls).toBe(1);
  });
});

describe('the verdict, the Accept and the traffic rules', () => {
  it('passes absolute and protocol-relative urls, refuses other non-paths', () => {
    const verdict = (url: string) => keyParamsVerdict(NEXT_IMAGE_RULE, { url, w: '64', q: '75' });
    expect(verdict('/a.png')).toBe('');
    expect(verdict('HTTPS://x.test/a.png')).toBe('pass');
    expect(verdict('//x.test/a.png')).toBe('pass');
    expect(verdict('javascript:alert(1)')).toMatch(/site-relative/);
    expect(verdict(`/${'a'.repeat(2048)}`)).toMatch(/too long/);
  });

  it('normalises Accept as Next prefers: AVIF, then WebP, then anything', () => {
    expect(normalisedAcceptOf('image/avif,image/webp,*/*')).toBe('image/avif,image/webp,*/*');
    expect(normalisedAcceptOf('IMAGE/WEBP')).toBe('image/webp,*/*');
    expect(normalisedAcceptOf(undefined)).toBe('*/*');
  });

  it('an unknown parameter on a key rule path is dropped, not a reason to pass', () => {
    const rules: TrafficRules = {
      bypassPaths: [],
      bypassCookies: [],
      bypassHeaders: [],
      staticPrefixes: [],
      allowedQueryParams: [],
      unknownQuery: 'pass',
    };
    const facts = { method: 'GET', path: '/_next/image', queryNames: ['url', 'w', 'q', 'x'] };
    const decide = (keyRules: TrafficRules['keyRules']) =>
      classifyRequest({ ...facts, headerNames: [], cookieNames: [] }, { ...rules, keyRules }).class;
    expect(decide([NEXT_IMAGE_RULE])).toBe('cached');
    expect(decide(undefined)).toBe('pass'); // control
  });

  it('the setting refuses unusable rules', () => {
    expect(() => parseKeyRules([{ path: '/x', params: [{ name: 'w', kind: 'float' }] }])).toThrow();
    expect(keyRuleProblems(NEXT_IMAGE_RULE, 'rule')).toEqual([]);
    const bad = { path: '/_isr/x', params: [{ name: 'w&', kind: 'int', max: 0, min: 5 }] } as const;
    expect(keyRuleProblems(bad, 'rule')).toHaveLength(3);
  });
});
