/**
 * One rule, three consumers: the CloudFront Function (generated source, run by the runtime
 * emulation), the origin (the module itself, on a function URL event's parts) and the bypass
 * path syntax of `core/path-patterns.ts`. Drawn requests and rules must get the same decision
 * from each.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { runViewerRequest } from '../../../lib/edge/cloudfront-functions-runtime.js';
import {
  UPSTREAM_ORIGIN_ID,
  viewerRequestFunctionSource,
} from '../../../lib/edge/viewer-request-function.js';
import { compilePathPatterns, matchesPathPattern } from '../../../lambda/core/path-patterns.js';
import {
  classifyRequest,
  requestFacts,
  type TrafficRules,
} from '../../../lambda/core/traffic-rules.js';

const segment = fc.constantFrom('a', 'api', '_next', 'static', '_isr', 'x.js', 'b', '');
const path = fc
  .array(segment, { minLength: 1, maxLength: 4 })
  .map((parts) => `/${parts.join('/')}`);
const pattern = fc
  .array(fc.oneof(segment, fc.constant('**')), { minLength: 1, maxLength: 4 })
  .map((parts) => `/${parts.join('/')}`.replace(/\*{3,}/g, '**'));
const cookieName = fc.constantFrom('draft', 'theme', '__prerender_bypass', 'sess');
const headerName = fc.constantFrom('x-preview', 'accept', 'x-other', 'next-router-prefetch');
const queryName = fc.constantFrom('page', 'q', 'utm_source', 'lang');

const rules: fc.Arbitrary<TrafficRules> = fc.record({
  bypassPaths: fc.array(pattern, { maxLength: 2 }),
  bypassCookies: fc.uniqueArray(cookieName, { maxLength: 2 }),
  bypassHeaders: fc.uniqueArray(headerName, { maxLength: 2 }),
  staticPrefixes: fc.array(
    path.map((prefix) => `${prefix}/`.replace(/\/+$/, '/')),
    {
      maxLength: 2,
    },
  ),
  allowedQueryParams: fc.uniqueArray(queryName, { maxLength: 2 }),
  unknownQuery: fc.constantFrom('pass' as const, 'drop' as const),
});

const request = fc.record({
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'OPTIONS', 'DELETE'),
  path,
  query: fc.array(fc.tuple(queryName, fc.constantFrom('1', '', 'x y')), { maxLength: 3 }),
  headers: fc.uniqueArray(headerName, { maxLength: 3 }),
  cookies: fc.uniqueArray(cookieName, { maxLength: 3 }),
});
type Drawn = typeof request extends fc.Arbitrary<infer T> ? T : never;

/** Whether the edge (built from `edgeRules`) and the origin (`rules`) decide `drawn` alike. */
function agree(edgeRules: TrafficRules, originRules: TrafficRules, drawn: Drawn): boolean {
  const source = viewerRequestFunctionSource({ routing: { rules: edgeRules } });
  const rawQueryString = drawn.query.map(([name, value]) => `${name}=${value}`).join('&');
  const headers = Object.fromEntries(drawn.headers.map((name) => [name, 'v']));
  const cookie = drawn.cookies.map((name) => `${name}=1`).join('; ');
  const edge = runViewerRequest(source, {
    method: drawn.method,
    uri: drawn.path,
    querystring: rawQueryString,
    headers: cookie === '' ? headers : { ...headers, cookie },
  });
  const origin = classifyRequest(
    requestFacts({
      method: drawn.method,
      rawPath: drawn.path,
      rawQueryString,
      headers,
      cookies: drawn.cookies.map((name) => `${name}=1`),
    }),
    originRules,
  );
  const selected = 'request' in edge ? edge.origin : 'answered';
  // The service's own paths take GET and HEAD only: the edge answers another method itself.
  const internalRefused =
    origin.reason === 'internal' && drawn.method !== 'GET' && drawn.method !== 'HEAD';
  if (internalRefused) return selected === 'answered';
  return selected === (origin.class === 'cached' ? undefined : UPSTREAM_ORIGIN_ID);
}

describe('the traffic rules, at the edge and at the origin', () => {
  it('decide every drawn request alike: the function selects the upstream exactly when the origin would pass it', () => {
    fc.assert(
      fc.property(rules, request, (drawnRules, drawn) => agree(drawnRules, drawnRules, drawn)),
      { numRuns: 400 },
    );
  });

  it('disagree when the edge reads other rules (negative control)', () => {
    const flipped = (drawn: TrafficRules): TrafficRules => ({
      ...drawn,
      unknownQuery: drawn.unknownQuery === 'pass' ? 'drop' : 'pass',
    });
    expect(() =>
      fc.assert(
        fc.property(rules, request, (drawnRules, drawn) =>
          agree(flipped(drawnRules), drawnRules, drawn),
        ),
        { numRuns: 400 },
      ),
    ).toThrow(/Property failed/);
  });

  it('read a bypass path as core/path-patterns.ts reads it (`**` across segments)', () => {
    fc.assert(
      fc.property(pattern, path, (drawnPattern, drawnPath) => {
        expect(matchesPathPattern(drawnPattern, drawnPath)).toBe(
          compilePathPatterns([drawnPattern])(drawnPath),
        );
      }),
      { numRuns: 1000 },
    );
  });
});
