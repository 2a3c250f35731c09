import { describe, expect, it } from '@jest/globals';
import {
  classifyRequest,
  isPrivilegedHeader,
  PRIVILEGED_HEADER_PREFIXES,
  PRIVILEGED_HEADERS,
  requestFacts,
  type RequestFacts,
  type TrafficRules,
} from '../../../lambda/core/traffic-rules.js';
import { matchesPathPattern } from '../../../lambda/core/path-patterns.js';

const rules: TrafficRules = {
  bypassPaths: ['/api/**', '/account'],
  bypassCookies: ['__prerender_bypass'],
  bypassHeaders: ['x-preview'],
  staticPrefixes: ['/_next/static/'],
  allowedQueryParams: ['page'],
  unknownQuery: 'pass',
};
const facts = (more: Partial<RequestFacts> = {}): RequestFacts => ({
  method: 'GET',
  path: '/blog/post',
  queryNames: [],
  headerNames: [],
  cookieNames: [],
  ...more,
});

describe('classifyRequest', () => {
  it('caches a page asked for with GET or HEAD and nothing that asks for the upstream', () => {
    expect(classifyRequest(facts(), rules)).toEqual({ class: 'cached', reason: 'page' });
    expect(classifyRequest(facts({ method: 'HEAD', queryNames: ['page'] }), rules)).toEqual({
      class: 'cached',
      reason: 'page',
    });
  });

  it('passes every other method through, lower-case spellings included', () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'get']) {
      expect(classifyRequest(facts({ method }), rules)).toEqual({
        class: 'pass',
        reason: 'method',
      });
    }
  });

  it('never passes the service’s own paths through, whatever the method', () => {
    const internal = facts({
      method: 'POST',
      path: '/_isr/revalidate',
      cookieNames: ['__prerender_bypass'],
    });
    expect(classifyRequest(internal, { ...rules, bypassPaths: ['/**'] })).toEqual({
      class: 'cached',
      reason: 'internal',
    });
  });

  it('routes static prefixes before bypass paths, and bypass paths, cookies and headers to the upstream', () => {
    const cases: [Partial<RequestFacts>, string, string][] = [
      [{ path: '/_next/static/chunks/a.js' }, 'static', 'static-prefix'],
      [{ path: '/api/counter' }, 'pass', 'bypass-path'],
      [{ path: '/api/' }, 'pass', 'bypass-path'],
      [{ path: '/account' }, 'pass', 'bypass-path'],
      [{ cookieNames: ['theme', '__prerender_bypass'] }, 'pass', 'bypass-cookie'],
      [{ headerNames: ['accept', 'x-preview'] }, 'pass', 'bypass-header'],
      [{ queryNames: ['page', 'q'] }, 'pass', 'unknown-query'],
    ];
    for (const [more, kind, reason] of cases) {
      expect(classifyRequest(facts(more), rules)).toEqual({ class: kind, reason });
    }
    expect(classifyRequest(facts({ path: '/account/x' }), rules).class).toBe('cached');
    expect(classifyRequest(facts({ path: '/apiary' }), rules).class).toBe('cached');
  });

  it("keeps a page with an unknown parameter cached in 'drop' mode (the parameter is dropped)", () => {
    expect(
      classifyRequest(facts({ queryNames: ['q'] }), { ...rules, unknownQuery: 'drop' }),
    ).toEqual({
      class: 'cached',
      reason: 'page',
    });
  });
});

describe('matchesPathPattern', () => {
  it('reads ** as any characters and everything else literally', () => {
    expect(matchesPathPattern('/api/**', '/api/a/b')).toBe(true);
    expect(matchesPathPattern('/**.json', '/a/b.json')).toBe(true);
    expect(matchesPathPattern('/**/x/**', '/a/x/b')).toBe(true);
    expect(matchesPathPattern('/a**a', '/a')).toBe(false);
    expect(matchesPathPattern('/a.b', '/aXb')).toBe(false);
    expect(matchesPathPattern('/**/x/**', '/a/y/b')).toBe(false);
  });
});

describe('requestFacts (a request that reached the origin)', () => {
  it('names query parameters, headers and cookies as the edge does', () => {
    expect(
      requestFacts({
        method: 'GET',
        rawPath: '/a',
        rawQueryString: 'page=2&q&&page=3',
        headers: { Accept: 'text/html', cookie: 'a=1; b=2' },
        cookies: ['c=3'],
      }),
    ).toEqual({
      method: 'GET',
      path: '/a',
      queryNames: ['page', 'q', 'page'],
      headerNames: ['accept'],
      cookieNames: ['c', 'a', 'b'],
    });
  });
});

describe('isPrivilegedHeader', () => {
  it("knows the service's and Next.js's privileged headers, and nothing else", () => {
    const privileged = (name: string) =>
      isPrivilegedHeader(name, PRIVILEGED_HEADERS, PRIVILEGED_HEADER_PREFIXES);
    for (const name of [
      'x-isr-origin-secret',
      'x-middleware-subrequest',
      'x-prerender-revalidate',
      'x-invoke-path',
    ]) {
      expect(privileged(name)).toBe(true);
    }
    for (const name of ['accept', 'rsc', 'next-router-prefetch', 'x-forwarded-host']) {
      expect(privileged(name)).toBe(false);
    }
  });
});
