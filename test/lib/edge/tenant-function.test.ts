import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import { tenantFunctionSource, tenantTableProblems } from '../../../lib/edge/tenant-function.js';
import { logicalIdOf, synthIsrStack } from '../stack-fixture.js';

type Headers = Record<string, { value: string }>;
interface Result {
  statusCode?: number;
  headers: Headers;
  body?: { data: string };
}

const options = {
  tenantHeader: 'x-tenant',
  tenantsByHost: { 'acme.example.com': 'acme', 'www.globex.example': 'globex' },
};

/** Runs the generated source as CloudFront would: a `handler(event)` in a fresh context. */
function viewerRequest(headers: Headers): Result {
  const sandbox: { handler?: (event: unknown) => Result } = {};
  runInNewContext(`${tenantFunctionSource(options)}\nthis.handler = handler;`, sandbox);
  return sandbox.handler?.({ request: { method: 'GET', uri: '/', headers } }) as Result;
}

describe('tenant from Host (CloudFront Function)', () => {
  it('sets the tenant of the host', () => {
    const result = viewerRequest({ host: { value: 'acme.example.com' } });
    expect(result.headers['x-tenant']).toEqual({ value: 'acme' });
  });

  it('overwrites a tenant header the viewer forged', () => {
    const result = viewerRequest({
      host: { value: 'acme.example.com' },
      'x-tenant': { value: 'globex' },
    });
    expect(result.headers['x-tenant']).toEqual({ value: 'acme' });
  });

  it('reads the host case-insensitively, without its port or trailing dot', () => {
    for (const host of ['WWW.Globex.Example', 'www.globex.example:443', 'www.globex.example.']) {
      expect(viewerRequest({ host: { value: host } }).headers['x-tenant']).toEqual({
        value: 'globex',
      });
    }
  });

  it('answers 421 for a host it does not know, whatever tenant header comes with it', () => {
    const attempts: Headers[] = [
      { host: { value: 'evil.example' }, 'x-tenant': { value: 'acme' } },
      { 'x-tenant': { value: 'acme' } },
      { host: { value: 'hasOwnProperty' } },
    ];
    for (const headers of attempts) {
      const result = viewerRequest(headers);
      expect(result.statusCode).toBe(421);
      expect(JSON.parse(result.body?.data ?? '{}')).toMatchObject({ error: 'unknown-host' });
    }
  });

  it('refuses a table CloudFront or the cache key could not use', () => {
    expect(tenantTableProblems(options)).toEqual([]);
    expect(tenantTableProblems({ ...options, tenantsByHost: {} })).toHaveLength(1);
    expect(
      tenantTableProblems({ ...options, tenantsByHost: { 'Acme.Example': 'acme' } })[0],
    ).toMatch(/lower-case host/);
    expect(
      tenantTableProblems({ ...options, tenantsByHost: { 'a.example': 'acme#x' } })[0],
    ).toMatch(/not a tenant name/);
    const many = Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [`site-${i}.example.com`, `tenant-${i}`]),
    );
    expect(tenantTableProblems({ ...options, tenantsByHost: many })[0]).toMatch(/10240-byte limit/);
  });
});

describe('IsrService with tenantsByHost', () => {
  const tenantsByHost = { 'acme.example.com': 'acme', 'globex.example': 'globex' };
  const { template, service } = synthIsrStack({
    service: { tenantHeader: 'X-Tenant', tenantsByHost },
  });

  it('runs the tenant function on every viewer request, before the cache lookup', () => {
    const fn = logicalIdOf(service.tenantFunction as NonNullable<typeof service.tenantFunction>);
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: {
        DefaultCacheBehavior: {
          FunctionAssociations: [
            { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [fn, 'FunctionARN'] } },
          ],
        },
      },
    });
    template.hasResourceProperties('AWS::CloudFront::Function', {
      FunctionConfig: { Runtime: 'cloudfront-js-2.0' },
      FunctionCode: tenantFunctionSource({ tenantHeader: 'x-tenant', tenantsByHost }),
    });
  });

  it('serves only the tenants the table names, and keys the cache on the header it sets', () => {
    expect(service.settings.tenants).toEqual(['acme', 'globex']);
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: {
        ParametersInCacheKeyAndForwardedToOrigin: {
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['x-tenant'] },
        },
      },
    });
  });

  it('needs multi-tenant mode, and refuses a table naming a tenant outside tenants', () => {
    expect(() => synthIsrStack({ service: { tenantsByHost } })).toThrow(/needs tenantHeader/);
    expect(() =>
      synthIsrStack({ service: { tenantHeader: 'x-tenant', tenantsByHost, tenants: ['acme'] } }),
    ).toThrow(/outside tenants: globex/);
  });

  it('refuses a table whose tenants differ only in case (issue 19, item 8)', () => {
    const twins = { 'a.example': 'Acme', 'b.example': 'acme' };
    expect(() =>
      synthIsrStack({ service: { tenantHeader: 'x-tenant', tenantsByHost: twins } }),
    ).toThrow(/tenants "Acme", "acme" differ only in case/);
    // two hosts of one tenant are fine
    const aliases = { 'a.example': 'Acme', 'www.a.example': 'Acme' };
    const { service } = synthIsrStack({
      service: { tenantHeader: 'x-tenant', tenantsByHost: aliases },
    });
    expect(service.settings.tenants).toEqual(['Acme']);
  });

  it('has no function without a table', () => {
    expect(synthIsrStack().service.tenantFunction).toBeUndefined();
  });
});
