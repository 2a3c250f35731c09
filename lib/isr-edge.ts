/**
 * Everything in front of the origin's function URL: the cache, origin request and response
 * headers policies, the optional rate-limiting web ACL, the distribution and its optional standard logging v2.
 */
import {
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionRuntime,
  type CachePolicy,
  type Distribution,
  type OriginRequestPolicy,
  type ResponseHeadersPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import {
  createPageCachePolicy,
  createPageDistribution,
  createPageOriginRequestPolicy,
  createPageResponseHeadersPolicy,
} from './isr-cdn.js';
import { viewerRequestFunctionSource } from './edge/viewer-request-function.js';
import { createCdnLogDelivery, type CdnLogDelivery } from './isr-cdn-logs.js';
import { stackRegionName } from './isr-names.js';
import type { IsrServiceProps } from './isr-service-props.js';
import type { IsrSettings } from './isr-settings.js';
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
  const responseHeadersPolicy = createPageResponseHeadersPolicy(
    scope,
    'PageResponseHeadersPolicy',
    settings,
  );
  const viewerRequestFunction = createViewerRequestFunction(scope, settings, props);
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
  };
}

/** CloudFront Function names are unique per account, at most 64 characters. */
const MAX_FUNCTION_NAME_LENGTH = 64;

/** The viewer-request function that derives the tenant from `Host` (see `edge/viewer-request-function.ts`). */
function createViewerRequestFunction(
  scope: Construct,
  settings: IsrSettings,
  props: IsrServiceProps,
): CloudFrontFunction | undefined {
  if (props.tenantsByHost === undefined || settings.tenantHeader === undefined) return undefined;
  return new CloudFrontFunction(scope, 'TenantFromHost', {
    functionName: stackRegionName(scope, 'tenant-from-host', MAX_FUNCTION_NAME_LENGTH),
    comment: 'ISR: the tenant header from Host; unknown hosts get 421',
    runtime: FunctionRuntime.JS_2_0,
    code: FunctionCode.fromInline(
      viewerRequestFunctionSource({
        tenantHeader: settings.tenantHeader,
        tenantsByHost: props.tenantsByHost,
      }),
    ),
  });
}
