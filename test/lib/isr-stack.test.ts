// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { Match } from 'aws-cdk-lib/assertions';
import { getAtt, serviceIds, synthIsrStack } from './stack-fixture.js';

describe('IsrStack', () => {
  const { template, service } = synthIsrStack();
  const ids = serviceIds(service);

  it('outputs the names an operator needs', () => {
    template.hasOutput('DistributionDomainName', {
      Value: getAtt(ids.distribution, 'DomainName'),
    });
    template.hasOutput('TableName', { Value: { Ref: ids.table } });
    template.hasOutput('BucketName', { Value: { Ref: ids.bucket } });
    template.hasOutput('QueueName', { Value: getAtt(ids.queue, 'QueueName') });
    template.hasOutput('DeadLetterQueueName', { Value: getAtt(ids.dlq, 'QueueName') });
  });

  it('outputs what the ops CLI reads: the queue URLs and the key settings', () => {
    template.hasOutput('QueueUrl', { Value: { Ref: ids.queue } });
    template.hasOutput('DeadLetterQueueUrl', { Value: { Ref: ids.dlq } });
    const { template: tenanted } = synthIsrStack({
      context: { tenantHeader: 'X-Tenant', allowedQueryParams: 'page,lang' },
    });
    const value = Object.values(tenanted.findOutputs('OpsSettings'))[0]?.Value as string;
    expect(JSON.parse(value)).toMatchObject({
      allowedQueryParams: ['lang', 'page'],
      tenantHeader: 'x-tenant',
      leaseSeconds: expect.any(Number),
    });
  });

  it('reads the service settings from CDK context', () => {
    const { template: tenanted, service: tenantService } = synthIsrStack({
      context: {
        tenantHeader: 'X-Tenant',
        allowedQueryParams: 'page,lang',
        deployId: 'release-42',
        renderOriginUrl: 'https://render.example.com',
      },
    });
    tenanted.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          ISR_TENANT_HEADER: 'x-tenant',
          // Lists travel as JSON, so an item may hold a comma (issue 19, item 11).
          ISR_ALLOWED_QUERY_PARAMS: '["lang","page"]',
          ISR_DEPLOY_ID: 'release-42',
          RENDER_ORIGIN_URL: 'https://render.example.com',
        }),
      },
    });
    expect(tenantService.settings.tenantHeader).toBe('x-tenant');
  });

  it('reads the routing settings from CDK context', () => {
    const { service: routed } = synthIsrStack({
      context: {
        renderOriginUrl: 'https://render.example.com',
        staticPrefixes: '/_next/static/,/_astro/',
        bypassPaths: '["/api/**"]',
        bypassCookies: '__prerender_bypass',
        bypassHeaders: 'X-Preview',
        unknownQuery: 'drop',
      },
    });
    expect(routed.settings).toMatchObject({
      staticPrefixes: ['/_astro/', '/_next/static/'],
      bypassPaths: ['/api/**'],
      bypassCookies: ['__prerender_bypass'],
      bypassHeaders: ['x-preview'],
      unknownQuery: 'drop',
    });
    expect(() => synthIsrStack({ context: { unknownQuery: 'keep' } })).toThrow(
      /unknownQuery must be one of pass, drop, got "keep"/,
    );
  });

  it('takes a list from context as a JSON array too', () => {
    const { service: fromJson } = synthIsrStack({
      context: { allowedQueryParams: '["page", "lang"]' },
    });
    expect(fromJson.settings.allowedQueryParams).toEqual(['lang', 'page']);
  });

  it('lets stack props win over context', () => {
    const { service: fromProps } = synthIsrStack({
      context: { deployId: 'from-context' },
      service: { deployId: 'from-props' },
    });
    expect(fromProps.settings.deployId).toBe('from-props');
  });
});
