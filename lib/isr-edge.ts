/**
 * Everything in front of the origin's function URL: the cache and origin request policies, the
 * optional rate-limiting web ACL, the distribution and its optional standard logging v2.
 */
import type { CachePolicy, Distribution, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import {
  createPageCachePolicy,
  createPageDistribution,
  createPageOriginRequestPolicy,
} from './isr-cdn.js';
import { createCdnLogDelivery, type CdnLogDelivery } from './isr-cdn-logs.js';
import type { IsrServiceProps } from './isr-service-props.js';
import type { IsrSettings } from './isr-settings.js';
import { createRateLimitWebAcl } from './isr-waf.js';

export interface PageEdge {
  readonly cachePolicy: CachePolicy;
  readonly originRequestPolicy: OriginRequestPolicy;
  readonly webAcl: CfnWebACL | undefined;
  readonly distribution: Distribution;
  readonly cdnLogDelivery: CdnLogDelivery | undefined;
}

/** The web ACL is the service's own (`rateLimitPerFiveMinutes`) or the caller's (`webAclId`). */
export function createPageEdge(
  scope: Construct,
  functionUrl: IFunctionUrl,
  settings: IsrSettings,
  props: IsrServiceProps,
): PageEdge {
  const cachePolicy = createPageCachePolicy(scope, 'PageCachePolicy', settings);
  const originRequestPolicy = createPageOriginRequestPolicy(
    scope,
    'PageOriginRequestPolicy',
    settings,
  );
  const limit = settings.rateLimitPerFiveMinutes;
  const webAcl = limit === undefined ? undefined : createRateLimitWebAcl(scope, limit);
  const distribution = createPageDistribution(scope, 'Distribution', {
    ...props,
    functionUrl,
    cachePolicy,
    originRequestPolicy,
    originTimeout: settings.originTimeout,
    webAclId: webAcl?.attrArn ?? props.webAclId,
  });
  const cdnLogDelivery =
    props.cdnLogs === undefined
      ? undefined
      : createCdnLogDelivery(scope, distribution, props.cdnLogs);
  return { cachePolicy, originRequestPolicy, webAcl, distribution, cdnLogDelivery };
}
