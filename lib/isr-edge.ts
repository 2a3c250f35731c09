/**
 * Everything in front of the origin's function URL: the cache, origin request and response
 * headers policies, the optional rate-limiting web ACL, the distribution and its optional standard logging v2.
 */
import type {
  BehaviorOptions,
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
  pageBehaviour,
  type CacheKeyShape,
  type PageDistributionOptions,
} from './isr-cdn.js';
import { createCdnLogDelivery, type CdnLogDelivery } from './isr-cdn-logs.js';
import { viewerRequestOptions } from './edge/viewer-request-function.js';
import {
  addPagesToDistribution,
  type ExistingDistributionPages,
} from './isr-existing-distribution.js';
import {
  addUpstreamBehaviours,
  createViewerRequestFunction,
  keyRuleBehaviours,
  type UpstreamBehaviours,
} from './isr-routing.js';
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
  const upstream =
    upstreamOrigin === undefined
      ? undefined
      : {
          origin: upstreamOrigin,
          staticPrefixes: settings.staticPrefixes,
          bypassPaths: settings.bypassPaths,
          tenantHeader: settings.tenantHeader,
          viewerRequestFunction,
          tenancy: props.tenantsByHost !== undefined,
        };
  const pages = {
    functionUrl,
    cachePolicy,
    originRequestPolicy,
    responseHeadersPolicy,
    originTimeout: settings.originTimeout,
    viewerRequestFunction,
    routesToUpstream: upstream !== undefined,
    pageBehaviours:
      upstream === undefined || settings.keyRules.length === 0
        ? undefined
        : (behaviour: BehaviorOptions) =>
            keyRuleBehaviours(scope, behaviour, settings.keyRules, settings.tenantHeader),
  };
  const { distribution, staticCachePolicy } =
    props.distribution === undefined
      ? ownDistribution(
          scope,
          { ...props, ...pages, webAclId: webAcl?.attrArn ?? props.webAclId },
          settings,
          upstream,
        )
      : existingDistribution(scope, props.distribution as Distribution, {
          pathPattern: props.pathPattern ?? '',
          ...existingPages(scope, pages),
          cacheTagHeader: settings.cacheTagHeader,
          upstream,
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
    staticCachePolicy,
  };
}

/** The pages' behaviour on the user's distribution, and its key rules' behaviours. */
function existingPages(
  scope: Construct,
  pages: Parameters<typeof pageBehaviour>[2] & Pick<PageDistributionOptions, 'pageBehaviours'>,
) {
  const behaviour = pageBehaviour(scope, 'Pages', pages);
  return { pages: behaviour, keyBehaviours: pages.pageBehaviours?.(behaviour) };
}

/** Today's default: a distribution of the service's own, the pages on its default behaviour. */
function ownDistribution(
  scope: Construct,
  options: Omit<PageDistributionOptions, 'cacheTagHeader'>,
  settings: IsrSettings,
  upstream: UpstreamBehaviours | undefined,
) {
  const distribution = createPageDistribution(scope, 'Distribution', {
    ...options,
    cacheTagHeader: settings.cacheTagHeader,
  });
  const added =
    upstream === undefined ? undefined : addUpstreamBehaviours(scope, distribution, upstream);
  return { distribution, staticCachePolicy: added?.staticCachePolicy };
}

/** The user's distribution (`distribution`, `pathPattern`), checked by the prop rules. */
function existingDistribution(
  scope: Construct,
  distribution: Distribution,
  input: Omit<ExistingDistributionPages, 'distribution'>,
) {
  const added = addPagesToDistribution(scope, { ...input, distribution });
  return { distribution, staticCachePolicy: added.staticCachePolicy };
}
