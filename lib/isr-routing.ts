/**
 * The edge's routing: the one viewer-request function, and the upstream's behaviours and origin
 * added to a distribution. Each piece takes the distribution it changes, so a distribution built
 * elsewhere in the app can be given the same routing (issue 24).
 */
import { Duration } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CacheCookieBehavior,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  CachedMethods,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  OriginRequestPolicy,
  ViewerProtocolPolicy,
  type BehaviorOptions,
  type Distribution,
  type IOrigin,
} from 'aws-cdk-lib/aws-cloudfront';
import type { Construct } from 'constructs';
import type { KeyRule } from '../lambda/core/key-rules.js';
import {
  needsViewerRequestFunction,
  PASS_KEY_HEADER,
  viewerRequestFunctionSource,
  type ViewerRequestFunctionOptions,
} from './edge/viewer-request-function.js';
import { stackRegionName } from './isr-names.js';
import { IsrServiceConfigError } from './isr-settings.js';

/** CloudFront Function names are unique per account, at most 64 characters. */
const MAX_FUNCTION_NAME_LENGTH = 64;
const MAX_POLICY_NAME_LENGTH = 128;

/** The viewer-request function, when there is a host table or an upstream to route to. */
export function createViewerRequestFunction(
  scope: Construct,
  options: ViewerRequestFunctionOptions,
): CloudFrontFunction | undefined {
  if (!needsViewerRequestFunction(options)) return undefined;
  return new CloudFrontFunction(scope, 'ViewerRequest', {
    functionName: stackRegionName(scope, 'viewer-request', MAX_FUNCTION_NAME_LENGTH),
    comment: 'ISR: the tenant from Host, and routing to the upstream by the traffic rules',
    runtime: FunctionRuntime.JS_2_0,
    code: FunctionCode.fromInline(viewerRequestFunctionSource(options)),
  });
}

/**
 * The upstream's own caching for its immutable assets: its Cache-Control decides (minimum and
 * default TTL 0, so an answer without one, or a 404 saying `no-store`, is never kept), keyed on
 * the path and the query (cache-busting parameters) and, in multi-tenant mode, the tenant; no
 * cookie. Named per stack and region.
 */
export function createStaticCachePolicy(scope: Construct, tenantHeader: string | undefined) {
  return new CachePolicy(scope, 'StaticCachePolicy', {
    cachePolicyName: stackRegionName(scope, 'static-cache', MAX_POLICY_NAME_LENGTH),
    comment: "ISR static assets: the upstream's Cache-Control, path and query, no cookies",
    minTtl: Duration.seconds(0),
    defaultTtl: Duration.seconds(0),
    maxTtl: Duration.days(365),
    queryStringBehavior: CacheQueryStringBehavior.all(),
    headerBehavior:
      tenantHeader === undefined
        ? CacheHeaderBehavior.none()
        : CacheHeaderBehavior.allowList(tenantHeader),
    cookieBehavior: CacheCookieBehavior.none(),
    enableAcceptEncodingGzip: true,
    enableAcceptEncodingBrotli: true,
  });
}

/**
 * Each key rule (`keyRules`, e.g. Next.js's `/_next/image`) as a behaviour of the pages' origin,
 * keyed on exactly what the origin keys it on: its query parameters, the Accept header the
 * viewer-request function normalised (one of three values, so keying on it is sound), and the
 * tenant header; no cookie; and the pass key of a request the function passes (an absolute
 * URL), which is therefore never shared (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-the-cache-key.html).
 * TTLs defer to the origin, as the pages' policy does.
 */
export function keyRuleBehaviours(
  scope: Construct,
  pages: BehaviorOptions,
  rules: readonly KeyRule[],
  tenantHeader: string | undefined,
): Record<string, BehaviorOptions> {
  const behaviours: Record<string, BehaviorOptions> = {};
  rules.forEach((rule, index) => {
    const headers = [
      ...(tenantHeader === undefined ? [] : [tenantHeader]),
      ...(rule.accept === 'image' ? ['accept'] : []),
      PASS_KEY_HEADER,
    ];
    const cachePolicy = new CachePolicy(scope, `KeyRuleCachePolicy${index}`, {
      cachePolicyName: stackRegionName(scope, `key-rule-${index}`, MAX_POLICY_NAME_LENGTH),
      comment: `ISR ${rule.path}: its query parameters and the normalised Accept only`,
      minTtl: Duration.seconds(0),
      defaultTtl: Duration.seconds(0),
      maxTtl: Duration.days(365),
      queryStringBehavior: CacheQueryStringBehavior.allowList(...rule.params.map((p) => p.name)),
      headerBehavior:
        headers.length === 0
          ? CacheHeaderBehavior.none()
          : CacheHeaderBehavior.allowList(...headers),
      cookieBehavior: CacheCookieBehavior.none(),
    });
    behaviours[rule.path.replace(/\*\*/g, '*')] = { ...pages, cachePolicy };
  });
  return behaviours;
}

export interface UpstreamBehaviours {
  readonly origin: IOrigin;
  readonly staticPrefixes: readonly string[];
  readonly bypassPaths: readonly string[];
  /** Keys static assets per tenant too (multi-tenant mode). */
  readonly tenantHeader: string | undefined;
  readonly viewerRequestFunction: CloudFrontFunction | undefined;
  /** Whether the function must run on static requests too (a host table: 421, the tenant). */
  readonly tenancy: boolean;
}

/**
 * Static prefixes first, then bypass paths, each a behaviour to the upstream, in the order the
 * traffic rules test them (CloudFront takes the first behaviour that matches). Bypass paths
 * cache nothing and forward all the viewer sent but Host; the function copies Host into
 * X-Forwarded-Host and strips privileged headers. CloudFront compresses static answers only:
 * a passed-through answer keeps the upstream's own encoding. Then the upstream origin is made
 * part of the distribution even when no behaviour names it, so the function can select it.
 */
export function addUpstreamBehaviours(
  scope: Construct,
  distribution: Distribution,
  upstream: UpstreamBehaviours,
): { readonly staticCachePolicy: CachePolicy | undefined } {
  const fn = upstream.viewerRequestFunction;
  const staticCachePolicy =
    upstream.staticPrefixes.length === 0
      ? undefined
      : createStaticCachePolicy(scope, upstream.tenantHeader);
  const functionAssociations =
    fn === undefined ? undefined : [{ function: fn, eventType: FunctionEventType.VIEWER_REQUEST }];
  for (const prefix of upstream.staticPrefixes) {
    distribution.addBehavior(`${prefix}*`, upstream.origin, {
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachedMethods: CachedMethods.CACHE_GET_HEAD,
      compress: true,
      cachePolicy: staticCachePolicy,
      functionAssociations: upstream.tenancy ? functionAssociations : undefined,
    });
  }
  for (const path of upstream.bypassPaths) {
    distribution.addBehavior(path.replace(/\*\*/g, '*'), upstream.origin, {
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachedMethods: CachedMethods.CACHE_GET_HEAD,
      compress: false,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      functionAssociations,
    });
  }
  addOriginWithoutBehaviour(distribution, upstream.origin);
  return { staticCachePolicy };
}

/**
 * `cf.selectRequestOriginById` needs the origin in the distribution, and CDK's Distribution adds
 * one only with a behaviour (aws-cdk-lib 2.276 has no public call for it). Its own `addOrigin`
 * is what `addBehavior` runs, and it returns the id of an origin already added: checked here,
 * so a CDK that renamed it fails the synth rather than the deploy.
 */
function addOriginWithoutBehaviour(distribution: Distribution, origin: IOrigin): void {
  const add = (distribution as unknown as { addOrigin?: (origin: IOrigin) => string }).addOrigin;
  if (typeof add !== 'function') {
    throw new IsrServiceConfigError(
      'IsrService: this aws-cdk-lib cannot add the upstream origin without a behaviour; add a static prefix or bypass path, or use aws-cdk-lib 2.276',
    );
  }
  add.call(distribution, origin);
}
