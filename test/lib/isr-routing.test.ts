// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy, VpcOriginEndpoint } from 'aws-cdk-lib/aws-cloudfront';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { ApplicationLoadBalancer } from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import {
  PASS_KEY_HEADER,
  UPSTREAM_ORIGIN_ID,
  viewerRequestFunctionSource,
} from '../../lib/edge/viewer-request-function.js';
import { IsrService, type IsrServiceProps } from '../../lib/isr-service.js';
import { cdkJsonContext, logicalIdOf, synthIsrStack } from './stack-fixture.js';

const routed: IsrServiceProps = {
  renderOriginUrl: 'https://ssr.example.com/app',
  staticPrefixes: ['/_next/static/', '/_astro/'],
  bypassPaths: ['/api/**'],
  bypassCookies: ['__prerender_bypass'],
  bypassHeaders: ['X-Preview'],
  allowedQueryParams: ['page'],
};

interface Behaviour {
  PathPattern: string;
  TargetOriginId: string;
  CachePolicyId: unknown;
  OriginRequestPolicyId?: unknown;
  FunctionAssociations?: unknown[];
  Compress: boolean;
  AllowedMethods: string[];
}
interface DistributionConfig {
  Origins: { Id: string }[];
  CacheBehaviors?: Behaviour[];
  DefaultCacheBehavior: Behaviour;
}

/** The distribution's config as the template holds it. */
function distributionOf(template: Template): DistributionConfig {
  const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
  return (distribution?.Properties as { DistributionConfig: DistributionConfig })
    .DistributionConfig;
}

const ALL_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'];

describe('IsrService routing to the upstream', () => {
  const { template, service, stack } = synthIsrStack({ service: routed });
  const config = distributionOf(template);
  const fn = { 'Fn::GetAtt': [logicalIdOf(service.viewerRequestFunction!), 'FunctionARN'] };

  it('reaches the upstream over https (TLS 1.2) at the host, port and path the functions use', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Origins: Match.arrayWith([
          Match.objectLike({
            Id: UPSTREAM_ORIGIN_ID,
            DomainName: 'ssr.example.com',
            OriginPath: '/app',
            CustomOriginConfig: Match.objectLike({
              OriginProtocolPolicy: 'https-only',
              OriginSSLProtocols: ['TLSv1.2'],
              OriginReadTimeout: 30,
            }),
          }),
        ]),
      }),
    });
  });

  it('routes static prefixes, then bypass paths, to the upstream, in the order the rules test them', () => {
    expect(config.CacheBehaviors?.map((b) => [b.PathPattern, b.TargetOriginId])).toEqual([
      ['/_astro/*', UPSTREAM_ORIGIN_ID],
      ['/_next/static/*', UPSTREAM_ORIGIN_ID],
      ['/api/*', UPSTREAM_ORIGIN_ID],
    ]);
  });

  it("caches static assets by the upstream's own Cache-Control, with no cookie, and never an answer without one", () => {
    const staticBehaviour = config.CacheBehaviors?.find((b) => b.PathPattern === '/_next/static/*');
    expect(staticBehaviour).toMatchObject({ Compress: true, AllowedMethods: ALL_METHODS });
    expect(staticBehaviour?.OriginRequestPolicyId).toBeUndefined();
    expect(staticBehaviour?.FunctionAssociations).toBeUndefined();
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: {
        Name: Match.anyValue(),
        Comment: Match.stringLikeRegexp('static assets'),
        MinTTL: 0,
        DefaultTTL: 0,
        MaxTTL: 31_536_000,
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          CookiesConfig: { CookieBehavior: 'none' },
          HeadersConfig: { HeaderBehavior: 'none' },
          QueryStringsConfig: { QueryStringBehavior: 'all' },
        }),
      },
    });
  });

  it('passes bypass paths through: nothing cached, all the viewer sent but Host, the function on them, no recompression', () => {
    const bypass = config.CacheBehaviors?.find((b) => b.PathPattern === '/api/*');
    expect(bypass).toMatchObject({
      CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
      OriginRequestPolicyId:
        OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
      FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: fn }],
      Compress: false,
      AllowedMethods: ALL_METHODS,
    });
  });

  it('runs the one viewer-request function on the default behaviour, which takes every method', () => {
    expect(config.DefaultCacheBehavior).toMatchObject({
      AllowedMethods: ALL_METHODS,
      FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: fn }],
    });
    expect(config.DefaultCacheBehavior.TargetOriginId).not.toBe(UPSTREAM_ORIGIN_ID);
    template.hasResourceProperties('AWS::CloudFront::Function', {
      FunctionConfig: { Runtime: 'cloudfront-js-2.0' },
      FunctionCode: viewerRequestFunctionSource({
        tenantHeader: undefined,
        tenantsByHost: undefined,
        routing: {
          rules: {
            bypassPaths: ['/api/**'],
            bypassCookies: ['__prerender_bypass'],
            bypassHeaders: ['x-preview'],
            staticPrefixes: ['/_astro/', '/_next/static/'],
            allowedQueryParams: ['page'],
            unknownQuery: 'pass',
          },
          upstreamSecretHeader: undefined,
        },
      }),
    });
  });

  it('keys pages on the pass key a passed request gets (never a bypass cookie or header) and on the allow-listed parameters only, unknown ones passing; an answer without Cache-Control is never cached', () => {
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        MinTTL: 0,
        DefaultTTL: 0,
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          CookiesConfig: { CookieBehavior: 'none' },
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: [PASS_KEY_HEADER] },
          QueryStringsConfig: { QueryStringBehavior: 'whitelist', QueryStrings: ['page'] },
        }),
      }),
    });
    expect(config.DefaultCacheBehavior.CachePolicyId).toEqual({
      Ref: logicalIdOf(service.cachePolicy),
    });
  });

  it('forwards the origin what a pass-through needs: every cookie, header but Host, and parameter', () => {
    template.hasResourceProperties('AWS::CloudFront::OriginRequestPolicy', {
      OriginRequestPolicyConfig: Match.objectLike({
        CookiesConfig: { CookieBehavior: 'all' },
        HeadersConfig: { HeaderBehavior: 'allExcept', Headers: ['host'] },
        QueryStringsConfig: { QueryStringBehavior: 'all' },
      }),
    });
  });

  it('keeps no error for lack of headers: a renamed asset after an upstream deploy, a passed error made with a viewer’s cookies', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        CustomErrorResponses: [404, 405, 414, 500, 501, 502, 503, 504].map((ErrorCode) => ({
          ErrorCode,
          ErrorCachingMinTTL: 0,
        })),
      }),
    });
  });

  it('alarms on 5xx the origin function did not answer, where CloudFront metrics are', () => {
    const alarms = template.findResources('AWS::CloudWatch::Alarm', {
      Properties: { AlarmDescription: Match.stringLikeRegexp('did not') },
    });
    const [alarm] = Object.values(alarms);
    expect(alarm?.Condition).toBeDefined(); // environment-agnostic: us-east-1 at deploy only
    const metrics = (alarm?.Properties as { Metrics: { Id: string; Expression?: string }[] })
      .Metrics;
    expect(metrics.map((metric) => metric.Id).sort()).toEqual(
      [
        'crashed',
        'expr_1',
        'failed',
        'refused',
        'requests',
        'throttled',
        'unavailable',
        'rate',
        'upstream',
      ].sort(),
    );
    expect(alarm?.Properties).toMatchObject({ Threshold: 1, EvaluationPeriods: 2 });
    expect(metrics.find((metric) => metric.Id === 'upstream')?.Expression).toBe(
      'FILL(requests, 0) * FILL(rate, 0) / 100 - (FILL(unavailable, 0) + FILL(refused, 0) + FILL(failed, 0) + FILL(crashed, 0) + FILL(throttled, 0))',
    );
    expect(stack.resolve(service.alarms.upstreamErrorRate?.alarmArn)).toBeDefined();
  });
});

describe('IsrService with an upstream and no routing settings', () => {
  const { template, service } = synthIsrStack({
    service: {
      renderOriginUrl: 'https://ssr.example.com',
      unknownQuery: 'drop',
      allowedQueryParams: ['page'],
    },
  });

  it('still makes the upstream an origin the function can select, with no behaviour of its own', () => {
    const config = distributionOf(template);
    expect(config.Origins.map((origin) => origin.Id)).toContain(UPSTREAM_ORIGIN_ID);
    expect(config.CacheBehaviors).toBeUndefined();
    expect(service.viewerRequestFunction).toBeDefined();
  });

  it("keys pages on the allowed parameters only in 'drop' mode (the function drops the rest)", () => {
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          QueryStringsConfig: { QueryStringBehavior: 'whitelist', QueryStrings: ['page'] },
          CookiesConfig: { CookieBehavior: 'none' },
        }),
      }),
    });
  });
});

describe('IsrService without an upstream CloudFront can reach', () => {
  it('routes nothing for the demo renderer: GET/HEAD only, no function, no upstream origin, no upstream alarm', () => {
    const { template, service } = synthIsrStack({
      env: { account: '123456789012', region: 'us-east-1' },
    });
    expect(distributionOf(template).DefaultCacheBehavior.AllowedMethods).toEqual(['GET', 'HEAD']);
    expect(service.viewerRequestFunction).toBeUndefined();
    expect(service.upstreamOrigin).toBeUndefined();
    expect(service.alarms.upstreamErrorRate).toBeUndefined();
    expect(service.alarms.cdnErrorRate).toBeDefined();
  });

  it('says why a loopback http upstream is not routed, and refuses routing settings for it', () => {
    const { stack, service } = synthIsrStack({
      service: { renderOriginUrl: 'http://localhost:3001' },
    });
    expect(service.upstreamOrigin).toBeUndefined();
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp('CloudFront cannot reach it'),
    );
    expect(() =>
      synthIsrStack({
        service: { renderOriginUrl: 'http://localhost:3001', bypassPaths: ['/api/**'] },
      }),
    ).toThrow(/bypassPaths route requests at the edge: CloudFront reaches only an https/);
  });
});

describe('the upstream secret and a private upstream', () => {
  /** One stack holding the service and what an app would pass it. */
  function build(props: (stack: Stack) => IsrServiceProps) {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Routed');
    const service = new IsrService(stack, 'Isr', props(stack));
    return { template: Template.fromStack(stack), stack, service };
  }
  const secretOf = (stack: Stack) =>
    new Secret(stack, 'UpstreamSecret', { generateSecretString: { excludePunctuation: true } });

  it('sends the secret as the upstream origin’s custom header, resolved from Secrets Manager at deploy', () => {
    const versionId = '0123456789abcdef0123456789abcdef';
    for (const version of [undefined, versionId]) {
      const { template } = build((stack) => ({
        renderOriginUrl: 'https://ssr.example.com',
        upstreamSecret: secretOf(stack),
        upstreamSecretHeader: 'x-origin-key',
        upstreamSecretVersionId: version,
      }));
      const upstream = distributionOf(template).Origins.find((o) => o.Id === UPSTREAM_ORIGIN_ID);
      expect(JSON.stringify(upstream)).toMatch(
        new RegExp(
          `"HeaderName":"x-origin-key","HeaderValue":\\{"Fn::Join":\\["",\\["\\{\\{resolve:secretsmanager:",\\{"Ref":"UpstreamSecret[0-9A-F]+"\\},":SecretString:::${version ?? ''}\\}\\}"`,
        ),
      );
    }
    expect(() =>
      build(() => ({
        renderOriginUrl: 'https://ssr.example.com',
        upstreamSecretVersionId: versionId,
      })),
    ).toThrow(/upstreamSecretVersionId needs upstreamSecret/);
  });

  it('reaches a private upstream through a CloudFront VPC origin, over https to the upstream’s host', () => {
    const { template } = build((stack) => {
      const vpc = new Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0 });
      const alb = new ApplicationLoadBalancer(stack, 'Upstream', { vpc, internetFacing: false });
      return {
        renderOriginUrl: 'https://ssr.internal.example.com:8443',
        upstreamVpcOrigin: VpcOriginEndpoint.applicationLoadBalancer(alb),
      };
    });
    template.hasResourceProperties('AWS::CloudFront::VpcOrigin', {
      VpcOriginEndpointConfig: Match.objectLike({
        Arn: { Ref: Match.stringLikeRegexp('^Upstream') },
        HTTPSPort: 8443,
        OriginProtocolPolicy: 'https-only',
        OriginSSLProtocols: ['TLSv1.2'],
      }),
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Origins: Match.arrayWith([
          Match.objectLike({
            Id: UPSTREAM_ORIGIN_ID,
            DomainName: 'ssr.internal.example.com',
            VpcOriginConfig: Match.objectLike({ VpcOriginId: Match.anyValue() }),
          }),
        ]),
      }),
    });
    expect(() =>
      build((stack) => {
        const vpc = new Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 0 });
        const alb = new ApplicationLoadBalancer(stack, 'Upstream', { vpc });
        return { upstreamVpcOrigin: VpcOriginEndpoint.applicationLoadBalancer(alb) };
      }),
    ).toThrow(/upstreamVpcOrigin needs an https renderOriginUrl/);
  });
});

describe('IsrService routing with tenants from Host', () => {
  const { template, service } = synthIsrStack({
    service: {
      ...routed,
      tenantHeader: 'x-tenant',
      tenantsByHost: { 'acme.example.com': 'acme' },
    },
  });

  it('runs the function on static prefixes too (421, the tenant), and keys static assets per tenant', () => {
    const fn = { 'Fn::GetAtt': [logicalIdOf(service.viewerRequestFunction!), 'FunctionARN'] };
    for (const behaviour of distributionOf(template).CacheBehaviors ?? []) {
      expect(behaviour.FunctionAssociations).toEqual([
        { EventType: 'viewer-request', FunctionARN: fn },
      ]);
    }
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        Comment: Match.stringLikeRegexp('static assets'),
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['x-tenant'] },
        }),
      }),
    });
  });
});
