/**
 * Issue 31, fix 5: CloudFront refuses an origin answer whose headers pass 20,480 bytes with a
 * 502 ("Quotas", https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/cloudfront-limits.html).
 * A page with 49 tags of the longest length and the headers it keeps (a large CSP, a long Link:
 * an in-process renderer has no 16 KB header limit of Node's HTTP client) passes it: through the
 * local CloudFront, the viewer gets the page, with what was cut by the stated rule (Link first,
 * then tags from the last, never the key tag).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_TAG_LENGTH } from '../../lambda/core/page/cache-tags.js';
import {
  fitAnswerHeaders,
  headerBytesOf,
  HEADER_BUDGET,
} from '../../lambda/core/serve/header-budget.js';
import type { PageResponse } from '../../lambda/core/serve/responses.js';
import { createObservability } from '../../lambda/shared/observability.js';
import type { LocalCloudFront } from '../../local/cloudfront/cloudfront.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService } from '../helpers/memory-service.js';
import { countingRenderer } from '../helpers/renderers.js';
import { streamingOrigin } from '../helpers/streaming-origin.js';

const TAGS = Array.from({ length: 49 }, (_, i) =>
  `${String(i).padStart(2, '0')}`.padEnd(MAX_TAG_LENGTH, 'x'),
);
const CSP = `default-src 'self'; script-src ${"'sha256-abc' ".repeat(700)}`;
const LINK = Array.from({ length: 40 }, (_, i) => `</asset-${i}.js>; rel=preload; as=script`).join(
  ', ',
);

let edge: LocalCloudFront;

beforeAll(async () => {
  const { renderer } = countingRenderer(() => ({
    status: 200,
    contentType: 'text/html',
    body: new TextEncoder().encode('<p>tagged</p>'),
    headers: {
      'cache-control': 'public, s-maxage=300',
      'content-security-policy': CSP,
      link: LINK,
    },
    tags: TAGS,
  }));
  const service = memoryService({ renderer, keyPolicy: { allowedQueryParams: [] } });
  const handler = streamingOrigin({
    deps: service.originDeps,
    tenantHeader: undefined,
    ...createObservability('origin'),
  });
  edge = await testCloudFront({}, handler);
});

describe('an answer whose headers would pass CloudFront’s 20,480 bytes (issue 31, fix 5)', () => {
  it('reaches the viewer, cut by the rule: Link, then tags from the last, never the key tag', async () => {
    const answer = await edge.handle(
      { method: 'GET', uri: '/big', querystring: '', headers: {}, clientIp: '203.0.113.7' },
      () => Promise.resolve(undefined),
    );
    const text = Buffer.concat([...(answer.body as Iterable<Uint8Array>)]).toString();
    expect({ status: answer.status, text: answer.status === 200 ? '' : text }).toEqual({
      status: 200,
      text: '',
    });
    const names = answer.headers.map(([name]) => name);
    expect(names).toContain('content-security-policy');
    expect(names).not.toContain('link');
    expect(edge.store.size).toBe(1); // kept at the edge, for its capped freshness
  });
});

describe('fitAnswerHeaders', () => {
  const page = (headers: Record<string, string>): PageResponse => ({
    status: 200,
    headers: {
      'content-type': 'text/html',
      'cache-control': 'public, max-age=0, s-maxage=300',
      ...headers,
    },
    body: undefined,
    decision: 'fresh',
    cacheKeyHash: 'h',
  });
  const options = { cacheTagHeader: 'x-isr-cache-tags', sharedMaxAgeWithoutTags: 2 };
  const tags = [...TAGS.map((tag) => `_/${tag}`), '_/key:0123'].join(',');

  it('leaves an answer that fits as it is', () => {
    const small = page({ link: '</a.js>; rel=preload' });
    expect(fitAnswerHeaders(small, options)).toEqual({ response: small, trimmed: [] });
  });

  it('cuts Link first, then tags from the last (the key tag stays), capping the shared freshness', () => {
    const { response, trimmed } = fitAnswerHeaders(
      page({ 'x-isr-cache-tags': tags, 'content-security-policy': CSP + CSP, link: LINK }),
      options,
    );
    expect(headerBytesOf(response)).toBeLessThanOrEqual(HEADER_BUDGET);
    expect(trimmed[0]).toBe('link');
    expect(trimmed[1]).toMatch(/^x-isr-cache-tags \(\d+ tags\)$/);
    const kept = response.headers['x-isr-cache-tags']?.split(',') ?? [];
    expect(kept.at(-1)).toBe('_/key:0123');
    expect(kept[0]).toBe(`_/${TAGS[0]}`);
    expect(response.headers['cache-control']).toBe('public, max-age=0, s-maxage=2');
    expect(response.headers['content-security-policy']).toBe(CSP + CSP);
  });

  it('then the largest of the upstream’s other headers, never the service’s own', () => {
    const { response, trimmed } = fitAnswerHeaders(
      page({ 'x-isr-cache': 'HIT', 'x-big': 'x'.repeat(21_000), 'x-small': 'y' }),
      options,
    );
    expect(trimmed).toEqual(['x-big']);
    expect(response.headers['x-small']).toBe('y');
    expect(response.headers['x-isr-cache']).toBe('HIT');
  });
});
