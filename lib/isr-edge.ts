/**
 * Everything in front of the origin's function URL: the cache, origin request and response
 * headers policies, the optional rate-limiting web ACL, the distribution and its optional standard logging v2.
 */
import type {
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  IOrigin,
  OriginRequestPolicy,
  ResponseHeadersPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import {
  createPageCachePolicy,
  createPageDistribution,
  createPageOriginRequestPolicy,
  createPageResponseHeadersPolicy,
  type CacheKeyShape,
} from './isr-cdn.js';
import { createCdnLogDelivery, type CdnLogDelivery } from './isr-cdn-logs.js';
import { viewerRequestOptions } from './edge/viewer-request-function.js';
import { addUpstreamBehaviours, createViewerRequestFunction } from './isr-routing.js';
import type { IsrServiceProps } from './isr-service-props.js';
import type { IsrSettings } from './isr-settings.js';
import { createUpstreamOrigin } from './isr-upstream.js';
import { createRateLimitWebAcl } from './isr-waf.js';

export interface PageEdge {
  readonly cachePolicy: CachePolicy;
  readonly originRequestPolicy: OriginRequestPolicy;
  /** Removes the cache-tag header from viewer responses. */
  readonly responseHeadersPolicy: ResponseHeadersPolicy;
  readonly webAcl: CfnWebACL | undefined;
  readonly distribution: Distribution;
  readonly cdnLogDelivery: CdnLogDelivery | undefined;
  readonly viewerRequestFunction: CloudFrontFunction | undefined;
  /** The upstream as a CloudFront origin; undefined for the demo renderer. */
  readonly upstreamOrigin: IOrigin | undefined;
  /** The static prefixes' cache policy (the upstream's own caching), when there are any. */
  readonly staticCachePolicy: CachePolicy | undefined;
}

/**
 * The web ACL is the service's own (`rateLimitPerFiveMinutes`) or the caller's (`webAclId`).
 * With an upstream CloudFront can reach, the edge routes to it (`isr-routing.ts`).
 */
export function createPageEdge(
  scope: Construct,
  functionUrl: IFunctionUrl,
  settings: IsrSettings,
  props: IsrServiceProps,
): PageEdge {
  const upstreamOrigin = createUpstreamOrigin(scope, settings, props);
  const shape: CacheKeyShape = {
    ...settings,
    routing: upstreamOrigin === undefined ? undefined : settings,
  };
  const cachePolicy = createPageCachePolicy(scope, 'PageCachePolicy', shape);
  const originRequestPolicy = createPageOriginRequestPolicy(
    scope,
    'PageOriginRequestPolicy',
    shape,
  );
  const responseHeadersPolicy = createPageResponseHeadersPolicy(
    scope,
    'PageResponseHeadersPolicy',
    settings,
  );
  const viewerRequestFunction = createViewerRequestFunction(
    scope,
    viewerRequestOptions(settings, props.tenantsByHost, upstreamOrigin !== undefined),
  );
  const limit = settings.rateLimitPerFiveMinutes;
  const webAcl = limit === undefined ? undefined : createRateLimitWebAcl(scope, limit);
  const distribution = createPageDistribution(scope, 'Distribution', {
    ...props,
    functionUrl,
    cachePolicy,
    originRequestPolicy,
    responseHeadersPolicy,
    cacheTagHeader: settings.cacheTagHeader,
    originTimeout: settings.originTimeout,
    webAclId: webAcl?.attrArn ?? props.webAclId,
    viewerRequestFunction,
    routesToUpstream: upstreamOrigin !== undefined,
  });
  const upstream =
    upstreamOrigin === undefined
      ? undefined
      : addUpstreamBehaviours(scope, distribution, {
          origin: upstreamOrigin,
          staticPrefixes: settings.staticPrefixes,
          bypassPaths: settings.bypassPaths,
          tenantHeader: settings.tenantHeader,
          viewerRequestFunction,
          tenancy: props.tenantsByHost !== undefined,
        });
  const cdnLogDelivery =
    props.cdnLogs === undefined
      ? undefined
      : createCdnLogDelivery(scope, distribution, props.cdnLogs);
  return {
    cachePolicy,
    originRequestPolicy,
    responseHeadersPolicy,
    webAcl,
    distribution,
    cdnLogDelivery,
    viewerRequestFunction,
    upstreamOrigin,
    staticCachePolicy: upstream?.staticCachePolicy,
  };
}
