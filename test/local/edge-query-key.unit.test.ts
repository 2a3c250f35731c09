/**
 * Issue 31, fix 2: with the `nextjs` preset, `_rsc` (a cache-buster that changes with the
 * viewer's router state) is never part of CloudFront's cache key, as SETTINGS.md says of every
 * ignored parameter: two RSC navigations of one page are one edge entry, as they are one origin
 * entry. A parameter off the allow-list still passes, with a key of its own.
 */
import { describe, expect, it } from '@jest/globals';
import type { FunctionUrlResult } from '../../lambda/origin/handler.js';
import type { OriginHandler } from '../../local/cloudfront/origins.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';

const get = (uri: string, querystring: string) => ({
  method: 'GET',
  uri,
  querystring,
  headers: { rsc: '1', host: 'www.example.com' },
  clientIp: '203.0.113.7',
});
const noBody = () => Promise.resolve(undefined);

describe('the nextjs preset at the edge', () => {
  it('keys RSC navigations on the page, not on _rsc: the second is a CloudFront hit', async () => {
    const seen: string[] = [];
    const handler: OriginHandler = (event) => {
      seen.push(event.rawQueryString);
      const result: FunctionUrlResult = {
        statusCode: 200,
        headers: { 'content-type': 'text/x-component', 'cache-control': 'public, s-maxage=60' },
        body: 'rsc payload',
      };
      return Promise.resolve(result);
    };
    const edge = await testCloudFront(
      { preset: 'nextjs', renderOriginUrl: 'http://127.0.0.1:1' },
      handler,
    );
    const first = await edge.handle(get('/blog', '_rsc=1a2b3'), noBody);
    const second = await edge.handle(get('/blog', '_rsc=9z8y7'), noBody);
    expect(first.result).toBe('Miss');
    expect(second.result).toBe('Hit');
    expect(seen).toEqual(['_rsc=1a2b3']);
  });
});
