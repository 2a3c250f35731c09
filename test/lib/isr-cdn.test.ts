// CDK's Template methods (hasResourceProperties, resourceCountIs, ...) are the assertions here.
import { describe, expect, it } from '@jest/globals';
import { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { getAtt, logicalIdOf, serviceIds, synthIsrStack } from './stack-fixture.js';

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
    const sourceArn = {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':cloudfront::',
          { Ref: 'AWS::AccountId' },
          ':distribution/',
          { Ref: ids.distribution },
        ],
      ],
    };
    for (const action of ['lambda:InvokeFunctionUrl', 'lambda:InvokeFunction']) {
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: action,
        Principal: 'cloudfront.amazonaws.com',
        FunctionName: getAtt(ids.functionUrl, 'FunctionArn'),
        SourceArn: sourceArn,
      });
    }
    template.resourceCountIs('AWS::Lambda::Permission', 2);
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
});
