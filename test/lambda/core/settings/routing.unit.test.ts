/**
 * The routing settings refuse what CloudFront or the service could not take, at cold start
 * (the origin's reader, what `cdk synth` also runs on the environment it writes) and in the
 * construct's own reading alike.
 */
import { describe, expect, it } from '@jest/globals';
import { matchesPathPattern } from '../../../../lambda/core/path-patterns.js';
import {
  readSettings,
  TABLE,
  writeSettings,
  type Reader,
} from '../../../../lambda/core/settings/index.js';

const REFS = {
  FACETHEORY_CACHE_TABLE_NAME: 'cache',
  ISR_BODY_BUCKET: 'bodies',
  ISR_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q.fifo',
  ISR_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/1/d.fifo',
};
const upstream = { renderOriginUrl: 'https://ssr.example.com' };

const reading = (inputs: Record<string, unknown>, reader: Reader = 'origin') =>
  readSettings(TABLE, reader, { ...writeSettings(TABLE, inputs), ...REFS }, { nameOf: (k) => k });
const problems = (inputs: Record<string, unknown>, reader?: Reader) =>
  reading(inputs, reader).problems;

describe('routing settings', () => {
  it('accept well-formed values with an upstream, and reach the origin, npm start and the construct', () => {
    const inputs = {
      ...upstream,
      staticPrefixes: ['/_next/static/', '/_astro/'],
      bypassPaths: ['/api/**', '/account'],
      bypassCookies: ['__prerender_bypass'],
      bypassHeaders: ['X-Preview'],
      unknownQuery: 'drop',
    };
    for (const reader of ['origin', 'local', 'deploy'] as const) {
      expect(problems(inputs, reader)).toEqual([]);
    }
    expect(reading(inputs).values).toMatchObject({
      bypassHeaders: ['x-preview'],
      bypassPaths: ['/account', '/api/**'],
      unknownQuery: 'drop',
    });
    expect(reading(inputs, 'worker').values).not.toHaveProperty('bypassPaths');
    expect(reading({}).values).toMatchObject({ unknownQuery: 'pass', staticPrefixes: [] });
  });

  it('refuse static prefixes CloudFront cannot route, or that reach /_isr/', () => {
    for (const prefix of ['/', '/_next/static', 'x/', '/a*/', '/a b/', '/_isr/', '/_', '/_i']) {
      expect(problems({ ...upstream, staticPrefixes: [prefix] })).toEqual([
        expect.stringMatching(/^staticPrefixes entry /),
      ]);
    }
  });

  it('refuse bypass paths with a lone *, foreign characters, or reaching /_isr/', () => {
    for (const path of ['/api/*', 'api/**', '/***', '/a b', '/**', '/_**', '/_isr/revalidate']) {
      expect(problems({ ...upstream, bypassPaths: [path] })).toEqual([
        expect.stringMatching(/^bypassPaths entry /),
      ]);
    }
    // the /_isr/ guard refuses exactly the patterns that can match a path under it
    for (const path of ['/**', '/_**', '/_isr/x.json', '/**.json']) {
      expect(matchesPathPattern(path, '/_isr/x.json')).toBe(true);
      expect(problems({ ...upstream, bypassPaths: [path] })).toHaveLength(1);
    }
    expect(problems({ ...upstream, bypassPaths: ['/api/**', '/_next/data/**'] })).toEqual([]);
  });

  it('refuse cookies and headers that are not names, are stripped at the edge, or overflow the key', () => {
    for (const cookie of ['a b', 'a;b', 'a=b']) {
      expect(problems({ ...upstream, bypassCookies: [cookie] })).toHaveLength(1);
    }
    for (const header of [
      'cookie',
      'host',
      'x-isr-draft',
      'x-prerender-revalidate',
      'x-amz-date',
    ]) {
      expect(problems({ ...upstream, bypassHeaders: [header] })).not.toEqual([]);
    }
    const eleven = Array.from({ length: 11 }, (_, i) => `c${i}`);
    expect(problems({ ...upstream, bypassCookies: eleven })).toEqual([
      expect.stringMatching(/names 11, at most 10/),
    ]);
    expect(problems({ ...upstream, bypassCookies: eleven.slice(1) })).toEqual([]);
    // Bypass headers are not in the key (a passed request has a pass key of its own): the
    // tenant header, the variant headers and the pass key are, at most 10.
    const nine = eleven.slice(2).map((name) => `x-${name}`);
    expect(problems({ ...upstream, bypassHeaders: eleven.slice(1).map((n) => `x-${n}`) })).toEqual(
      [],
    );
    const variants = (names: string[]) => names.map((name) => ({ name, values: ['1'] }));
    // At most 8 variant headers, the tenant header and the pass key: 10, CloudFront's quota.
    expect(
      problems({ ...upstream, variantHeaders: variants(nine.slice(1)), tenantHeader: 'x-tenant' }),
    ).toEqual([]);
    expect(
      problems({ ...upstream, bypassHeaders: ['x-tenant'], tenantHeader: 'x-tenant' }),
    ).toEqual([expect.stringMatching(/must not name the tenant header/)]);
  });

  it('need an upstream to route to', () => {
    expect(problems({ bypassCookies: ['draft'], staticPrefixes: ['/s/'] })).toEqual([
      'staticPrefixes, bypassCookies route requests to the upstream: they need renderOriginUrl',
    ]);
    expect(problems({ bypassCookies: [], unknownQuery: 'drop' })).toEqual([]);
  });

  it('keep behaviours and listed query parameters within CloudFront’s quotas', () => {
    const prefixes = Array.from({ length: 12 }, (_, i) => `/s${i}/`);
    const paths = Array.from({ length: 12 }, (_, i) => `/p${i}/**`);
    expect(problems({ ...upstream, staticPrefixes: prefixes, bypassPaths: paths })).toEqual([]);
    expect(
      problems({ ...upstream, staticPrefixes: [...prefixes, '/s99/'], bypassPaths: paths }),
    ).toEqual([expect.stringMatching(/make 25 CloudFront behaviours, at most 24/)]);
    // The key lists them by name, whatever unknownQuery does with the others.
    const params = Array.from({ length: 11 }, (_, i) => `p${i}`);
    expect(problems({ ...upstream, allowedQueryParams: params.slice(1) })).toEqual([]);
    for (const unknownQuery of ['pass', 'drop']) {
      expect(problems({ ...upstream, allowedQueryParams: params, unknownQuery })).toEqual([
        expect.stringMatching(/names 11 parameters, at most 10/),
      ]);
    }
    expect(problems({ allowedQueryParams: params })).toHaveLength(1);
  });
});
