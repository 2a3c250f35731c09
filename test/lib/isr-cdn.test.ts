// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { PASS_KEY_HEADER } from '../../lib/edge/viewer-request-function.js';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { CDN_DISTRIBUTION_ID_ENV } from '../../lambda/shared/cdn-env.js';
import { wireCdnPurge } from '../../lib/isr-cdn.js';
import { grantCdnInvalidation } from '../../lib/isr-permissions.js';
import { IsrService } from '../../lib/isr-service.js';
import { IsrServiceConfigError } from '../../lib/isr-settings.js';
import {
  actionsOf,
  allowedActionsOf,
  cdkJsonContext,
  coversAction,
  getAtt,
  logicalIdOf,
  policyStatementsOf,
  resourceOf,
  resourcesOf,
  serviceIds,
  synthIsrStack,
  type FixtureOptions,
  type PolicyStatementJson,
  distributionArnOf,
} from './stack-fixture.js';

const account = '123456789012';
const east = { account, region: 'us-east-1' };

/** The names CloudFront holds account-wide, as CloudFormation will see them (JSON text). */
function globalNamesOf(options: FixtureOptions): [string, string, string] {
  const { template, stack } = synthIsrStack(options);
  const nameOf = (type: string, config: string) => {
    const [resource] = Object.values(template.findResources(type)) as {
      Properties: Record<string, { Name: unknown }>;
    }[];
    return JSON.stringify(stack.resolve(resource?.Properties[config]?.Name));
  };
  return [
    nameOf('AWS::CloudFront::CachePolicy', 'CachePolicyConfig'),
    nameOf('AWS::CloudFront::OriginRequestPolicy', 'OriginRequestPolicyConfig'),
    nameOf('AWS::CloudFront::OriginAccessControl', 'OriginAccessControlConfig'),
  ];
}

const lengthOf = (json: string) => (JSON.parse(json) as string).length;

describe('IsrService CloudFront', () => {
  const { template, service } = synthIsrStack();
  const ids = serviceIds(service);

  it('reaches the origin only through its IAM-authenticated function URL', () => {
    template.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'AWS_IAM',
      TargetFunctionArn: getAtt(ids.origin, 'Arn'),
    });
    template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: {
        OriginAccessControlOriginType: 'lambda',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      },
    });
  });

  it('signs origin requests to the function URL with OAC', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Origins: [
          Match.objectLike({
            DomainName: {
              'Fn::Select': [2, { 'Fn::Split': ['/', getAtt(ids.functionUrl, 'FunctionUrl')] }],
            },
            OriginAccessControlId: Match.objectLike({ 'Fn::GetAtt': Match.anyValue() }),
            CustomOriginConfig: Match.objectLike({
              OriginProtocolPolicy: 'https-only',
              OriginReadTimeout: 30,
            }),
          }),
        ],
      }),
    });
  });

  it('lets only this distribution invoke the origin, by URL and by function', () => {
    const sourceArn = distributionArnOf(ids.distribution);
    for (const action of ['lambda:InvokeFunctionUrl', 'lambda:InvokeFunction']) {
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: action,
        Principal: 'cloudfront.amazonaws.com',
        FunctionName: getAtt(ids.functionUrl, 'FunctionArn'),
        SourceArn: sourceArn,
      });
    }
    // The only other invoke permission is EventBridge's, on the sweeper alone.
    template.resourceCountIs('AWS::Lambda::Permission', 3);
    template.resourcePropertiesCountIs(
      'AWS::Lambda::Permission',
      {
        Principal: 'events.amazonaws.com',
        FunctionName: getAtt(logicalIdOf(service.sweeperFunction), 'Arn'),
      },
      1,
    );
  });

  it('serves GET/HEAD over HTTPS only, compressed, on HTTP/2 and HTTP/3', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        HttpVersion: 'http2and3',
        DefaultCacheBehavior: Match.objectLike({
          ViewerProtocolPolicy: 'redirect-to-https',
          AllowedMethods: ['GET', 'HEAD'],
          CachedMethods: ['GET', 'HEAD'],
          Compress: true,
          CachePolicyId: { Ref: logicalIdOf(service.cachePolicy) },
          OriginRequestPolicyId: { Ref: logicalIdOf(service.originRequestPolicy) },
        }),
      }),
    });
  });

  it('holds viewers to TLS 1.2 when given a certificate', () => {
    const scratch = new Stack();
    const { template: custom } = synthIsrStack({
      service: {
        domainNames: ['pages.example.com'],
        certificate: Certificate.fromCertificateArn(
          scratch,
          'Cert',
          'arn:aws:acm:us-east-1:123456789012:certificate/abc',
        ),
      },
    });
    custom.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['pages.example.com'],
        ViewerCertificate: Match.objectLike({
          MinimumProtocolVersion: 'TLSv1.2_2021',
          SslSupportMethod: 'sni-only',
        }),
      }),
    });
  });

  it('keys the cache on nothing but the path by default', () => {
    template.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        MinTTL: 0,
        DefaultTTL: 0,
        MaxTTL: 31_536_000,
        ParametersInCacheKeyAndForwardedToOrigin: {
          QueryStringsConfig: { QueryStringBehavior: 'none' },
          HeadersConfig: { HeaderBehavior: 'none' },
          CookiesConfig: { CookieBehavior: 'none' },
          EnableAcceptEncodingGzip: true,
          EnableAcceptEncodingBrotli: true,
        },
      }),
    });
    template.hasResourceProperties('AWS::CloudFront::OriginRequestPolicy', {
      OriginRequestPolicyConfig: Match.objectLike({
        QueryStringsConfig: { QueryStringBehavior: 'none' },
        HeadersConfig: { HeaderBehavior: 'none' },
        CookiesConfig: { CookieBehavior: 'none' },
      }),
    });
  });

  it('keys the cache on exactly the allow-listed query params and the tenant header', () => {
    const { template: tenanted } = synthIsrStack({
      service: { allowedQueryParams: ['page', 'lang'], tenantHeader: 'X-Tenant' },
    });
    tenanted.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          QueryStringsConfig: {
            QueryStringBehavior: 'whitelist',
            QueryStrings: ['lang', 'page'],
          },
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['x-tenant'] },
          CookiesConfig: { CookieBehavior: 'none' },
        }),
      }),
    });
    tenanted.hasResourceProperties('AWS::CloudFront::OriginRequestPolicy', {
      OriginRequestPolicyConfig: Match.objectLike({
        QueryStringsConfig: { QueryStringBehavior: 'whitelist', QueryStrings: ['lang', 'page'] },
        HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['x-tenant'] },
        CookiesConfig: { CookieBehavior: 'none' },
      }),
    });
  });

  it('keys the cache on the variant headers and forwards them, so each variant is its own object', () => {
    const { template: varied } = synthIsrStack({
      service: { variantHeaders: [{ name: 'x-variant', values: ['a', 'b'] }] },
    });
    varied.hasResourceProperties('AWS::CloudFront::CachePolicy', {
      CachePolicyConfig: Match.objectLike({
        ParametersInCacheKeyAndForwardedToOrigin: Match.objectLike({
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['x-variant'] },
        }),
      }),
    });
    varied.hasResourceProperties('AWS::CloudFront::OriginRequestPolicy', {
      OriginRequestPolicyConfig: Match.objectLike({
        HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['x-variant'] },
      }),
    });
  });

  it('the nextjs preset keys on the RSC headers and the pass key (never a bypass header), and ignores _rsc at the edge', () => {
    const { template: next } = synthIsrStack({
      service: { preset: 'nextjs', renderOriginUrl: 'https://ssr.example.com' },
    });
    const policies = Object.values(next.findResources('AWS::CloudFront::CachePolicy')).map(
      (policy) =>
        (
          policy as {
            Properties: {
              CachePolicyConfig: {
                Comment: string;
                ParametersInCacheKeyAndForwardedToOrigin: { HeadersConfig: { Headers?: string[] } };
              };
            };
          }
        ).Properties.CachePolicyConfig,
    );
    const pages = policies.find((policy) => policy.Comment.startsWith('ISR pages'));
    expect(pages?.ParametersInCacheKeyAndForwardedToOrigin.HeadersConfig.Headers?.sort()).toEqual([
      'next-router-prefetch',
      'next-router-segment-prefetch',
      'rsc',
      PASS_KEY_HEADER,
    ]);
    const [fn] = Object.values(next.findResources('AWS::CloudFront::Function')) as {
      Properties: { FunctionCode: string };
    }[];
    expect(fn.Properties.FunctionCode).toContain('"ignoredQueryParams":["_rsc"]');
    expect(fn.Properties.FunctionCode).toContain('"staticPrefixes":["/_next/static/"]');
  });

  it('never forwards the viewer Host header to the function URL', () => {
    for (const built of [
      template,
      synthIsrStack({ service: { tenantHeader: 'x-tenant' } }).template,
    ]) {
      const policies = built.findResources('AWS::CloudFront::OriginRequestPolicy');
      expect(Object.keys(policies)).toHaveLength(1);
      for (const policy of Object.values(policies)) {
        const headers = (
          policy as {
            Properties: {
              OriginRequestPolicyConfig: {
                HeadersConfig: { HeaderBehavior: string; Headers?: string[] };
              };
            };
          }
        ).Properties.OriginRequestPolicyConfig.HeadersConfig;
        expect(['none', 'whitelist']).toContain(headers.HeaderBehavior);
        expect((headers.Headers ?? []).map((name) => name.toLowerCase())).not.toContain('host');
      }
    }
  });

  describe('deployed twice in one account', () => {
    it('names its policies and origin access control per stack and region', () => {
      const stages = [
        globalNamesOf({ stackName: 'IsrStaging', env: east }),
        globalNamesOf({ stackName: 'IsrProd', env: east }),
        globalNamesOf({ stackName: 'IsrProd', env: { account, region: 'eu-west-1' } }),
      ];
      const all = stages.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(stages[1][2]).toBe('"IsrProd-us-east-1-origin-access"');
    });

    it('keeps long names within CloudFront limits, still distinct', () => {
      const long = 'Isr' + 'x'.repeat(120);
      const a = globalNamesOf({ stackName: `${long}A`, env: east });
      const b = globalNamesOf({ stackName: `${long}B`, env: east });
      for (const name of [...a, ...b]) expect(lengthOf(name)).toBeLessThanOrEqual(128);
      expect(lengthOf(a[2])).toBeLessThanOrEqual(64);
      expect(a[2]).not.toBe(b[2]);
    });

    it('names by the region at deploy when the stack is environment-agnostic', () => {
      expect(globalNamesOf({})[0]).toContain('AWS::Region');
    });
  });

  describe('rate limit', () => {
    it('attaches a CLOUDFRONT web ACL with a per-IP rate-based rule', () => {
      const { template: limited, service: limitedService } = synthIsrStack({
        env: east,
        service: { rateLimitPerFiveMinutes: 2000 },
      });
      limited.hasResourceProperties('AWS::WAFv2::WebACL', {
        Scope: 'CLOUDFRONT',
        DefaultAction: { Allow: {} },
        Rules: [
          Match.objectLike({
            Action: { Block: {} },
            Statement: {
              RateBasedStatement: {
                Limit: 2000,
                AggregateKeyType: 'IP',
                EvaluationWindowSec: 300,
              },
            },
          }),
        ],
      });
      limited.hasResourceProperties('AWS::CloudFront::Distribution', {
        DistributionConfig: Match.objectLike({
          WebACLId: getAtt(logicalIdOf(limitedService.webAcl as CfnWebACL), 'Arn'),
        }),
      });
    });

    it('refuses a stack outside us-east-1, and asserts the region when it is unknown', () => {
      expect(() =>
        synthIsrStack({
          env: { account, region: 'eu-west-1' },
          service: { rateLimitPerFiveMinutes: 2000 },
        }),
      ).toThrow(/rateLimitPerFiveMinutes .* needs the stack in us-east-1.*pass webAclId/);
      const { template: agnostic } = synthIsrStack({ service: { rateLimitPerFiveMinutes: 2000 } });
      expect(JSON.stringify(agnostic.toJSON().Rules)).toContain('us-east-1');
    });

    it('cannot be combined with a web ACL of its own', () => {
      expect(() =>
        synthIsrStack({
          env: east,
          service: {
            rateLimitPerFiveMinutes: 2000,
            webAclId: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/isr/abc',
          },
        }),
      ).toThrow(IsrServiceConfigError);
    });

    it('creates no web ACL by default', () => {
      template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    });
  });

  describe('standard logging v2', () => {
    const logged = (destination: 'logGroup' | 'bucket') => {
      const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
      const stack = new Stack(app, 'Logged', { env: east });
      const target =
        destination === 'logGroup'
          ? { logGroup: new LogGroup(stack, 'CdnLogs') }
          : { bucket: new Bucket(stack, 'CdnLogs', { enforceSSL: true }) };
      const built = new IsrService(stack, 'Isr', { cdnLogs: target });
      return { template: Template.fromStack(stack), service: built, stack };
    };

    it('delivers the access logs of the distribution to a log group', () => {
      const { template: built, service: withLogs } = logged('logGroup');
      built.hasResourceProperties('AWS::Logs::DeliverySource', {
        LogType: 'ACCESS_LOGS',
        Name: 'Logged-us-east-1-cdn',
        ResourceArn: Match.objectLike({
          'Fn::Join': ['', Match.arrayWith([{ Ref: logicalIdOf(withLogs.distribution) }])],
        }),
      });
      built.hasResourceProperties('AWS::Logs::DeliveryDestination', {
        OutputFormat: 'json',
        DestinationResourceArn: Match.objectLike({
          'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp(':log-group:$')])],
        }),
      });
      built.hasResource('AWS::Logs::Delivery', {
        Properties: Match.objectLike({ DeliverySourceName: 'Logged-us-east-1-cdn' }),
        DependsOn: [logicalIdOf(withLogs.cdnLogDelivery!.source)],
      });
    });

    it('lets log delivery write to a bucket of the stack, from this delivery source only', () => {
      const { template: built } = logged('bucket');
      built.hasResourceProperties('AWS::S3::BucketPolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Sid: 'CloudFrontStandardLogsV2',
              Principal: { Service: 'delivery.logs.amazonaws.com' },
              Action: 's3:PutObject',
              Condition: Match.objectLike({ ArnLike: Match.anyValue() }),
            }),
          ]),
        },
      });
    });

    it('needs the stack in us-east-1, where the delivery source must be', () => {
      const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
      const stack = new Stack(app, 'West', { env: { account, region: 'eu-west-1' } });
      expect(
        () => new IsrService(stack, 'Isr', { cdnLogs: { logGroup: new LogGroup(stack, 'L') } }),
      ).toThrow(/cdnLogs .* needs the stack in us-east-1/);
    });
  });
});

describe('IsrService CDN purge by cache tag', () => {
  let purger: Role | undefined;
  const { template, service } = synthIsrStack({
    alter: (built) => {
      purger = new Role(built, 'PurgeTestRole', {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      });
      grantCdnInvalidation(purger, built.distribution);
    },
  });
  const ids = serviceIds(service);

  it('configures CloudFront to read the cache tags from the origin header', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        CacheTagConfig: { HeaderName: 'x-isr-cache-tags' },
      }),
    });
    const { template: custom } = synthIsrStack({ service: { cacheTagHeader: 'X-Page-Tags' } });
    custom.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({ CacheTagConfig: { HeaderName: 'x-page-tags' } }),
    });
  });

  it('removes the cache-tag header from every viewer response, and adds nothing', () => {
    const policies = template.findResources('AWS::CloudFront::ResponseHeadersPolicy');
    expect(Object.keys(policies)).toHaveLength(1);
    const [policyId] = Object.keys(policies) as [string];
    template.hasResourceProperties('AWS::CloudFront::ResponseHeadersPolicy', {
      ResponseHeadersPolicyConfig: {
        Name: Match.anyValue(),
        Comment: Match.anyValue(),
        RemoveHeadersConfig: { Items: [{ Header: 'x-isr-cache-tags' }] },
      },
    });
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({ ResponseHeadersPolicyId: { Ref: policyId } }),
      }),
    });
  });

  it('names its response headers policy per stack and region, like the other policies', () => {
    const nameIn = (stackName: string) => {
      const { template: built, stack } = synthIsrStack({ stackName, env: east });
      const [policy] = Object.values(
        built.findResources('AWS::CloudFront::ResponseHeadersPolicy'),
      ) as { Properties: { ResponseHeadersPolicyConfig: { Name: unknown } } }[];
      return JSON.stringify(stack.resolve(policy?.Properties.ResponseHeadersPolicyConfig.Name));
    };
    const [first, second] = [nameIn('SiteA'), nameIn('SiteB')];
    expect(first).toContain('SiteA');
    expect(first).not.toBe(second);
  });

  it('lets a granted role create invalidations on this distribution only', () => {
    const { statements } = policyStatementsOf(template, logicalIdOf(purger as Role));
    const purges = statements.filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('cloudfront:')),
    );
    expect(purges).toHaveLength(1);
    const [purge] = purges as [PolicyStatementJson];
    expect(purge.Effect).toBe('Allow');
    expect(actionsOf(purge)).toEqual(['cloudfront:CreateInvalidation']);
    expect(resourcesOf(purge)).toEqual([distributionArnOf(ids.distribution)]);
  });

  it('grants no CDN action to the origin or the worker', () => {
    for (const role of [ids.originRole, ids.workerRole]) {
      const actions = allowedActionsOf(template, role);
      expect(
        actions.filter((action) => coversAction([action], 'cloudfront:CreateInvalidation')),
      ).toEqual([]);
    }
  });
});

describe('wireCdnPurge', () => {
  it('grants the function the purge and names the distribution in its environment', () => {
    let fnId = '';
    const { template, service } = synthIsrStack({
      alter: (built) => {
        const fn = new LambdaFunction(built, 'PurgingFunction', {
          runtime: Runtime.NODEJS_22_X,
          handler: 'index.handler',
          code: Code.fromInline('export const handler = () => undefined;'),
        });
        wireCdnPurge(fn, built.distribution);
        fnId = logicalIdOf(fn);
      },
    });
    const distribution = { Ref: serviceIds(service).distribution };
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [CDN_DISTRIBUTION_ID_ENV]: distribution } },
    });
    const role = resourceOf<{ Role: { 'Fn::GetAtt': [string, string] } }>(template, fnId).Properties
      .Role['Fn::GetAtt'][0];
    expect(allowedActionsOf(template, role)).toContain('cloudfront:CreateInvalidation');
  });
});
