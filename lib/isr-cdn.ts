/**
 * CloudFront in front of the origin's function URL, with policies that mirror the origin's cache
 * key (`normaliseCacheKey`): the allow-listed query parameters and, in multi-tenant mode, the
 * tenant header; never cookies. The edge and the origin then agree on what one page is, and
 * nothing else reaches the origin.
 */
import { Duration } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { CfnDistribution } from 'aws-cdk-lib/aws-cloudfront';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachedMethods,
  CacheCookieBehavior,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  OriginRequestCookieBehavior,
  OriginRequestHeaderBehavior,
  OriginRequestPolicy,
  OriginRequestQueryStringBehavior,
  Distribution,
  FunctionEventType,
  FunctionUrlOriginAccessControl,
  HttpVersion,
  type IFunction,
  ResponseHeadersPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
  type GeoRestriction,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { Function as LambdaFunction, IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { UnknownQuery } from '../lambda/core/traffic-rules.js';
import { CDN_DISTRIBUTION_ID_ENV } from '../lambda/shared/cdn-env.js';
import { PASS_KEY_HEADER } from './edge/viewer-request-function.js';
import { grantCdnInvalidation } from './isr-permissions.js';
import { stackRegionName } from './isr-names.js';

/**
 * The errors CloudFront keeps for its Error Caching Minimum TTL (10 s) whatever they say ("How
 * CloudFront processes HTTP 4xx and 5xx status codes from your origin",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/HTTPStatusCodes.html).
 */
export const ERRORS_CLOUDFRONT_CACHES = [404, 405, 414, 500, 501, 502, 503, 504];

/** CloudFront's default origin response timeout quota. */
const MAX_ORIGIN_READ_TIMEOUT_SECONDS = 60;
/** Name lengths CloudFront accepts: policies 128, origin access controls 64. */
const MAX_POLICY_NAME_LENGTH = 128;
const MAX_OAC_NAME_LENGTH = 64;

export interface CacheKeyShape {
  readonly allowedQueryParams: readonly string[];
  readonly tenantHeader: string | undefined;
  /** Headers that select a page's variant (`variantHeaders`): keyed on and forwarded. */
  readonly variantHeaders?: readonly { readonly name: string }[] | undefined;
  /** With an upstream: the routing settings the key must answer to. */
  readonly routing?: PageRouting | undefined;
}

/** What the default behaviour needs to know of the routing, with an upstream. */
export interface PageRouting {
  readonly bypassCookies: readonly string[];
  readonly bypassHeaders: readonly string[];
  readonly unknownQuery: UnknownQuery;
}

/**
 * Keys on exactly the origin's cache-key inputs (variant headers included), and with an
 * upstream on the pass key the viewer-request function gives every request it passes
 * (`PASS_KEY_HEADER`, the request's own id): a request holding a bypass cookie or header, an
 * unknown parameter or another method never gets the public copy, and never leaves an entry
 * another request could get (the function's choice of origin does not change the cache lookup,
 * and the upstream's answer to it was made with the viewer's cookies), while the answer the
 * upstream gives it stays the upstream's. TTLs defer to the origin: default and minimum 0, so
 * only an answer's own `s-maxage`/`max-age` makes it cacheable (one without Cache-Control, such
 * as an API's JSON, never is), capped at a year. Gzip and Brotli are part of the key so
 * CloudFront can compress and serve each encoding. Named per stack and region.
 */
export function createPageCachePolicy(scope: Construct, id: string, shape: CacheKeyShape) {
  const routing = shape.routing;
  const headers = [...keyHeadersOf(shape), ...(routing === undefined ? [] : [PASS_KEY_HEADER])];
  const cookies: string[] = [];
  return new CachePolicy(scope, id, {
    cachePolicyName: stackRegionName(scope, 'pages-cache', MAX_POLICY_NAME_LENGTH),
    comment:
      routing === undefined
        ? 'ISR pages: allow-listed query params and tenant header only'
        : 'ISR pages: the page key, and what routes a request to the upstream',
    minTtl: Duration.seconds(0),
    defaultTtl: Duration.seconds(0),
    maxTtl: Duration.days(365),
    // The allow-listed parameters only, whatever `unknownQuery`: a request with another one is
    // passed with a pass key of its own, and an ignored one (`_rsc`) is no key of a page.
    queryStringBehavior:
      shape.allowedQueryParams.length === 0
        ? CacheQueryStringBehavior.none()
        : CacheQueryStringBehavior.allowList(...shape.allowedQueryParams),
    headerBehavior:
      headers.length === 0 ? CacheHeaderBehavior.none() : CacheHeaderBehavior.allowList(...headers),
    cookieBehavior:
      cookies.length === 0 ? CacheCookieBehavior.none() : CacheCookieBehavior.allowList(...cookies),
    enableAcceptEncodingGzip: true,
    enableAcceptEncodingBrotli: true,
  });
}

/**
 * Without an upstream, forwards the same allow-lists and nothing else. With one, the origin
 * must be able to pass a request through as the viewer made it (hit-for-pass), so it gets every
 * cookie, header and query parameter; the cache key still holds only the page's inputs, and a
 * render that may be stored never sees the rest (the origin's rule). Never the viewer's Host
 * (the function URL routes on its own host name, and OAC signs it; the viewer-request function
 * copies it into X-Forwarded-Host). Named per stack and region.
 */
export function createPageOriginRequestPolicy(scope: Construct, id: string, shape: CacheKeyShape) {
  if (shape.routing !== undefined) {
    return new OriginRequestPolicy(scope, id, {
      originRequestPolicyName: stackRegionName(scope, 'pages-origin', MAX_POLICY_NAME_LENGTH),
      comment: 'ISR pages: all the viewer sent but Host, so a page can pass through',
      queryStringBehavior: OriginRequestQueryStringBehavior.all(),
      headerBehavior: OriginRequestHeaderBehavior.denyList('host'),
      cookieBehavior: OriginRequestCookieBehavior.all(),
    });
  }
  return new OriginRequestPolicy(scope, id, {
    originRequestPolicyName: stackRegionName(scope, 'pages-origin', MAX_POLICY_NAME_LENGTH),
    comment: 'ISR pages: allow-listed query params and tenant header only, never Host',
    queryStringBehavior:
      shape.allowedQueryParams.length === 0
        ? OriginRequestQueryStringBehavior.none()
        : OriginRequestQueryStringBehavior.allowList(...shape.allowedQueryParams),
    headerBehavior:
      keyHeadersOf(shape).length === 0
        ? OriginRequestHeaderBehavior.none()
        : OriginRequestHeaderBehavior.allowList(...keyHeadersOf(shape)),
    cookieBehavior: OriginRequestCookieBehavior.none(),
  });
}

/** The headers of the origin's cache key: the tenant header, then each variant header. */
const keyHeadersOf = (shape: CacheKeyShape): string[] => [
  ...(shape.tenantHeader === undefined ? [] : [shape.tenantHeader]),
  ...(shape.variantHeaders ?? []).map((rule) => rule.name),
];

/**
 * Viewers never see the page's cache tags (they name tenants and pages): CloudFront reads the
 * header from the origin response it caches, and this policy removes it only from what it sends
 * to viewers (Developer Guide, "Add or remove HTTP headers in CloudFront responses with a
 * policy"). It adds nothing, so the headers the origin sets stay as they are.
 */
export function createPageResponseHeadersPolicy(
  scope: Construct,
  id: string,
  options: { readonly cacheTagHeader: string },
): ResponseHeadersPolicy {
  return new ResponseHeadersPolicy(scope, id, {
    responseHeadersPolicyName: stackRegionName(scope, 'pages-response', MAX_POLICY_NAME_LENGTH),
    comment: 'ISR pages: cache tags are for CloudFront only, never sent to viewers',
    removeHeaders: [options.cacheTagHeader],
  });
}

/**
 * Turns on invalidation by cache tag: CloudFront stores the comma-separated tags of the origin's
 * `header` with each object, and a `#tag` invalidation item purges them (Developer Guide,
 * "Invalidating content by cache tags"; CloudFormation `DistributionConfig.CacheTagConfig`).
 * aws-cdk-lib 2.276.0 has the property on CfnDistribution only, not on the L2, hence the override.
 */
export function enableCacheTags(distribution: Distribution, header: string): void {
  (distribution.node.defaultChild as CfnDistribution).addPropertyOverride(
    'DistributionConfig.CacheTagConfig.HeaderName',
    header,
  );
}

export interface PageDistributionOptions {
  readonly functionUrl: IFunctionUrl;
  readonly cachePolicy: CachePolicy;
  readonly originRequestPolicy: OriginRequestPolicy;
  /** Removes the cache-tag header from viewer responses (`createPageResponseHeadersPolicy`). */
  readonly responseHeadersPolicy: ResponseHeadersPolicy;
  /** The origin's cache-tag header, which CloudFront's CacheTagConfig reads. */
  readonly cacheTagHeader: string;
  /** The origin function's timeout: CloudFront waits as long (up to its 60 s default quota). */
  readonly originTimeout: Duration;
  readonly domainNames?: string[] | undefined;
  readonly certificate?: ICertificate | undefined;
  readonly webAclId?: string | undefined;
  readonly geoRestriction?: GeoRestriction | undefined;
  readonly accessLogsBucket?: IBucket | undefined;
  /** Runs on every viewer request before the cache lookup (tenancy, routing). */
  readonly viewerRequestFunction?: IFunction | undefined;
  /**
   * Whether the edge routes to an upstream: the default behaviour then takes every method (the
   * function sends all but GET/HEAD upstream) and a 404 is never cached for lack of headers.
   */
  readonly routesToUpstream?: boolean | undefined;
  /** Behaviours on the pages' origin besides the default one (`keyRuleBehaviours`). */
  readonly pageBehaviours?:
    ((pages: BehaviorOptions) => Record<string, BehaviorOptions>) | undefined;
}

/** What the pages' behaviour needs, on the service's distribution or on one the user brings. */
export type PageBehaviourInput = Pick<
  PageDistributionOptions,
  | 'functionUrl'
  | 'cachePolicy'
  | 'originRequestPolicy'
  | 'responseHeadersPolicy'
  | 'originTimeout'
  | 'viewerRequestFunction'
  | 'routesToUpstream'
>;

/**
 * The pages' behaviour (issue 24: the default behaviour of the service's own distribution, or
 * a path pattern added to the user's): GET/HEAD over HTTPS only (every method with an
 * upstream), compressed. The function URL is reached through Origin Access Control: CloudFront
 * signs each request (SigV4) and the helper grants cloudfront.amazonaws.com both
 * lambda:InvokeFunctionUrl and lambda:InvokeFunction (via the URL), each conditioned on the
 * distribution's ARN. The access control is named per stack and region.
 */
export function pageBehaviour(
  scope: Construct,
  id: string,
  options: PageBehaviourInput,
): BehaviorOptions {
  const readTimeout = Math.min(options.originTimeout.toSeconds(), MAX_ORIGIN_READ_TIMEOUT_SECONDS);
  const originAccessControl = new FunctionUrlOriginAccessControl(scope, `${id}OriginAccess`, {
    originAccessControlName: stackRegionName(scope, 'origin-access', MAX_OAC_NAME_LENGTH),
    description: 'ISR origin function URL, signed with SigV4',
  });
  return {
    origin: FunctionUrlOrigin.withOriginAccessControl(options.functionUrl, {
      readTimeout: Duration.seconds(readTimeout),
      originAccessControl,
    }),
    viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
    allowedMethods: options.routesToUpstream
      ? AllowedMethods.ALLOW_ALL
      : AllowedMethods.ALLOW_GET_HEAD,
    cachedMethods: CachedMethods.CACHE_GET_HEAD,
    compress: true,
    cachePolicy: options.cachePolicy,
    originRequestPolicy: options.originRequestPolicy,
    responseHeadersPolicy: options.responseHeadersPolicy,
    functionAssociations:
      options.viewerRequestFunction === undefined
        ? undefined
        : [
            {
              function: options.viewerRequestFunction,
              eventType: FunctionEventType.VIEWER_REQUEST,
            },
          ],
  };
}

/** The pages as its default behaviour ({@link pageBehaviour}), HTTP/2 and 3, purgeable by cache tag. */
export function createPageDistribution(
  scope: Construct,
  id: string,
  options: PageDistributionOptions,
): Distribution {
  const logs = options.accessLogsBucket;
  const pages = pageBehaviour(scope, id, options);
  const distribution = new Distribution(scope, id, {
    comment: 'ISR pages',
    defaultBehavior: pages,
    additionalBehaviors: options.pageBehaviours?.(pages),
    httpVersion: HttpVersion.HTTP2_AND_3,
    // CloudFront keeps 404, 405, 414 and 5xx 10 s by default whatever they say: an error made
    // with a viewer's cookies (a pass-through's) must not be kept for the next viewer, and a 404
    // of a renamed asset must not outlive the upstream's deploy. What states a lifetime is still
    // kept for it (the origin's gone pages say s-maxage; a passed error states none).
    errorResponses: options.routesToUpstream
      ? ERRORS_CLOUDFRONT_CACHES.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) }))
      : undefined,
    // Only a custom certificate can hold viewers to TLS 1.2 (the default one is fixed at TLSv1).
    minimumProtocolVersion: options.certificate ? SecurityPolicyProtocol.TLS_V1_2_2021 : undefined,
    domainNames: options.domainNames,
    certificate: options.certificate,
    webAclId: options.webAclId,
    geoRestriction: options.geoRestriction,
    enableLogging: logs !== undefined,
    logBucket: logs,
    logFilePrefix: logs ? 'cloudfront/' : undefined,
  });
  enableCacheTags(distribution, options.cacheTagHeader);
  return distribution;
}

/**
 * Lets `fn` purge `distribution` by cache tag, in one call: the grant (CreateInvalidation on
 * this distribution only) and the variable that names the distribution to the function.
 */
export function wireCdnPurge(fn: LambdaFunction, distribution: Distribution): void {
  grantCdnInvalidation(fn, distribution);
  fn.addEnvironment(CDN_DISTRIBUTION_ID_ENV, distribution.distributionId);
}
