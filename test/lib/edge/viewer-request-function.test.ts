import { describe, expect, it } from '@jest/globals';
import { viewerRequestFunctionSource } from '../../../lib/edge/viewer-request-function.js';
import { logicalIdOf, synthIsrStack } from '../stack-fixture.js';

describe('IsrService with tenantsByHost', () => {
  const tenantsByHost = { 'acme.example.com': 'acme', 'globex.example': 'globex' };
  const { template, service } = synthIsrStack({
    service: { tenantHeader: 'X-Tenant', tenantsByHost },
  });

  it('runs the viewer-request function on every viewer request, before the cache lookup', () => {
    const fn = logicalIdOf(
      service.viewerRequestFunction as NonNullable<typeof service.viewerRequestFunction>,
    );
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
      FunctionCode: viewerRequestFunctionSource({ tenantHeader: 'x-tenant', tenantsByHost }),
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

  it('has no function without a table or an upstream', () => {
    expect(synthIsrStack().service.viewerRequestFunction).toBeUndefined();
  });
});
