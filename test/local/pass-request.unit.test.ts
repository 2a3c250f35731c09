/**
 * Issue 31, fixes 9 and 10: what a pass-through sends the upstream, through the local CloudFront
 * of a multi-tenant distribution. The tenant goes as the service validated it (the pass strips
 * the header as internal, then sets its own: the renderer does the same), never the default
 * site's answer; and the signing headers of CloudFront's origin access control never go on.
 * Whether a function URL event keeps them AWS's documentation does not say (its payload example
 * shows the caller in `requestContext.authorizer.iam`); an AWS_IAM function URL's event seen in
 * aws/serverless-java-container#780 has `x-amz-date` and `x-amz-security-token` among its
 * headers, and the local CloudFront sends all four (`local/cloudfront/origins.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { createOriginPassThrough } from '../../lambda/origin/build.js';
import { loadOriginConfig } from '../../lambda/shared/config.js';
import { createObservability } from '../../lambda/shared/observability.js';
import type { LocalCloudFront } from '../../local/cloudfront/cloudfront.js';
import { startHttpServer, type SeenRequest } from '../helpers/http-server.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService } from '../helpers/memory-service.js';
import { streamingOrigin } from '../helpers/streaming-origin.js';

let site: Awaited<ReturnType<typeof startHttpServer>>;
let edge: LocalCloudFront;

beforeAll(async () => {
  site = await startHttpServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'private, no-store' });
    res.end('<p>account</p>');
  });
  const config = loadOriginConfig({
    RENDER_ORIGIN_URL: site.url,
    ISR_TENANT_HEADER: 'x-tenant',
    FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
    ISR_BODY_BUCKET: 'isr-bodies',
    ISR_QUEUE_URL: 'http://127.0.0.1:1/queue/isr-regeneration',
  });
  const service = memoryService({
    renderer: new HttpRenderer({
      originUrl: site.url,
      maxBodyBytes: 100_000,
      tenantHeader: 'x-tenant',
    }),
    passThrough: createOriginPassThrough(config, undefined),
    keyPolicy: { allowedQueryParams: [] },
  });
  const handler = streamingOrigin({
    deps: { ...service.originDeps, tenancy: { header: 'x-tenant' } },
    tenantHeader: 'x-tenant',
    ...createObservability('origin'),
  });
  edge = await testCloudFront(config.settings, handler);
});
afterAll(() => site.close());

const headersOf = (seen: SeenRequest) => seen.headers;

describe('a pass-through from the origin (issue 31, fixes 9 and 10)', () => {
  it('carries the validated tenant and none of the origin access control’s signing headers', async () => {
    const answer = await edge.handle(
      {
        method: 'GET',
        uri: '/account',
        querystring: '',
        headers: { 'x-tenant': 'acme', cookie: 'session=alice' },
        clientIp: '203.0.113.7',
      },
      () => Promise.resolve(undefined),
    );
    expect(answer.status).toBe(200);
    const [render, pass] = site.seen.map(headersOf);
    expect(render?.['x-tenant']).toBe('acme');
    expect(pass?.cookie).toBe('session=alice');
    expect(pass?.['x-tenant']).toBe('acme');
    for (const name of [
      'authorization',
      'x-amz-date',
      'x-amz-security-token',
      'x-amz-content-sha256',
    ]) {
      expect({ name, value: pass?.[name] }).toEqual({ name, value: undefined });
    }
  });
});
