// CDK's Template methods are the assertions here.
import { describe, expect, it } from '@jest/globals';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IsrServiceProps } from '../../lib/isr-service.js';
import { synthIsrStack } from './stack-fixture.js';

interface Behaviour {
  PathPattern: string;
  TargetOriginId: string;
  CachePolicyId: { Ref: string };
  FunctionAssociations?: unknown[];
}
interface DistributionConfig {
  CacheBehaviors?: Behaviour[];
  DefaultCacheBehavior: Omit<Behaviour, 'PathPattern'>;
}

function distributionOf(template: Template): DistributionConfig {
  const [distribution] = Object.values(template.findResources('AWS::CloudFront::Distribution'));
  return (distribution?.Properties as { DistributionConfig: DistributionConfig })
    .DistributionConfig;
}

const nextjs: IsrServiceProps = { renderOriginUrl: 'https://ssr.example.com', preset: 'nextjs' };

describe('a key rule (the nextjs preset: /_next/image) at the CDN', () => {
  it("is a behaviour of the pages' origin, keyed on url, w, q and the normalised Accept", () => {
    const { template } = synthIsrStack({ service: nextjs });
    const config = distributionOf(template);
    const image = config.CacheBehaviors?.find((b) => b.PathPattern === '/_next/image');
    expect(image?.TargetOriginId).toBe(config.DefaultCacheBehavior.TargetOriginId);
    expect(image?.FunctionAssociations).toEqual(config.DefaultCacheBehavior.FunctionAssociations);
    const policy = template.findResources('AWS::CloudFront::CachePolicy')[image!.CachePolicyId.Ref];
    const key = (
      policy?.Properties as {
        CachePolicyConfig: { ParametersInCacheKeyAndForwardedToOrigin: Record<string, unknown> };
      }
    ).CachePolicyConfig.ParametersInCacheKeyAndForwardedToOrigin;
    expect(key).toMatchObject({
      QueryStringsConfig: { QueryStringBehavior: 'whitelist', QueryStrings: ['url', 'w', 'q'] },
      // The pass key: a request the edge passes never shares an entry (issue 31, fix 1).
      HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['accept', 'x-isr-pass-key'] },
      CookiesConfig: { CookieBehavior: 'none' },
    });
  });

  it('control: without key rules there is no such behaviour', () => {
    const { template } = synthIsrStack({ service: { ...nextjs, keyRules: [] } });
    const paths = distributionOf(template).CacheBehaviors?.map((b) => b.PathPattern);
    expect(paths).not.toContain('/_next/image');
  });
});
