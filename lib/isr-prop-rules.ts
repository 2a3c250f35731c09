/**
 * Rules of the props that name resources rather than settings (the edge: its tenant table, its
 * function and its upstream; secrets, logs, the network, WAF, a distribution the user brings):
 * checked at synth only, since no function reads them.
 */
import { Distribution } from 'aws-cdk-lib/aws-cloudfront';
import {
  viewerRequestFunctionProblems,
  viewerRequestOptions,
  type EdgeSettings,
} from './edge/viewer-request-function.js';
import type { IsrServiceProps } from './isr-service-props.js';

/** The settings the edge's rules read. */
interface EdgeValues extends EdgeSettings {
  readonly tenants: readonly string[] | undefined;
  readonly renderOriginUrl: string | undefined;
  readonly upstreamSecretVersionId: string | undefined;
}

/** The upstream CloudFront can route to: an https URL; none for the demo renderer or loopback http. */
export function edgeUpstreamUrl(renderOriginUrl: string | undefined): URL | undefined {
  if (renderOriginUrl === undefined) return undefined;
  try {
    const url = new URL(renderOriginUrl);
    return url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The edge's own rules: the host table (it needs the header, and serves only allowed tenants),
 * the one viewer-request function (CloudFront's size quota included), and what routing to the
 * upstream needs from CloudFront (an https upstream, for the routing settings, a VPC origin).
 */
export function edgeProblems(s: EdgeValues, props: IsrServiceProps): string[] {
  const problems: string[] = [];
  if (props.tenantsByHost !== undefined && s.tenantHeader === undefined) {
    return ['tenantsByHost needs tenantHeader'];
  }
  const routed = edgeUpstreamUrl(s.renderOriginUrl) !== undefined;
  problems.push(
    ...viewerRequestFunctionProblems(viewerRequestOptions(s, props.tenantsByHost, routed)),
  );
  const unserved = Object.values(props.tenantsByHost ?? {}).filter(
    (tenant) => !(s.tenants ?? []).includes(tenant),
  );
  if (unserved.length > 0) {
    problems.push(`tenantsByHost names tenants outside tenants: ${unserved.join(', ')}`);
  }
  const routing = (
    ['staticPrefixes', 'bypassPaths', 'bypassCookies', 'bypassHeaders'] as const
  ).filter((key) => s[key].length > 0);
  if (!routed && s.renderOriginUrl !== undefined && routing.length > 0) {
    problems.push(
      `${routing.join(', ')} route requests at the edge: CloudFront reaches only an https renderOriginUrl`,
    );
  }
  if (props.upstreamVpcOrigin !== undefined && !routed) {
    problems.push('upstreamVpcOrigin needs an https renderOriginUrl (its host names the upstream)');
  }
  if (s.upstreamSecretVersionId !== undefined && s.upstreamSecret === undefined) {
    problems.push('upstreamSecretVersionId needs upstreamSecret');
  }
  return problems;
}

/** Props that configure a whole distribution: on one the user brings, they are the user's. */
const DISTRIBUTION_PROPS = [
  'domainNames',
  'certificate',
  'webAclId',
  'geoRestriction',
  'rateLimitPerFiveMinutes',
  'cdnLogs',
] as const;

/** A CloudFront path pattern (at most 255 characters of its alphabet), rooted at `/`. */
const PATH_PATTERN = /^\/[A-Za-z0-9_\-.$/~"'@:+*?&]{0,254}$/;

/** Props of the existing-distribution mode that cannot take effect as given. */
export function existingDistributionProblems(props: IsrServiceProps): string[] {
  const { distribution, pathPattern } = props;
  if (distribution === undefined) {
    return pathPattern === undefined
      ? []
      : [
          "pathPattern needs distribution: the service's own distribution serves pages on its default behaviour",
        ];
  }
  const problems: string[] = [];
  if (!(distribution instanceof Distribution)) {
    problems.push(
      `distribution ${distribution.node.path} is imported: CloudFormation can change only a Distribution defined in this app, so the service cannot add its behaviours, origins or cache-tag header to it`,
    );
  }
  if (pathPattern === undefined) {
    problems.push(
      "distribution needs pathPattern (e.g. '/blog/*'), the pages' behaviour: the default behaviour stays the distribution's own",
    );
  } else if (!PATH_PATTERN.test(pathPattern)) {
    problems.push(
      `pathPattern must be a CloudFront path pattern starting with / (e.g. '/blog/*'), got '${pathPattern}'`,
    );
  }
  const distributionProps = DISTRIBUTION_PROPS.filter((key) => props[key] !== undefined);
  if (distributionProps.length > 0) {
    problems.push(
      `${distributionProps.join(', ')} configure the service's own distribution: set them on the distribution you pass`,
    );
  }
  return problems;
}

const COMPLETE_ARN =
  'needs a complete ARN (a Secret of this app, or Secret.fromSecretCompleteArn), so the grant names exactly one secret';

/** Props naming resources that cannot take effect as given. */
export function resourceProblems(props: IsrServiceProps): string[] {
  const problems = existingDistributionProblems(props);
  if (props.webAclId !== undefined && props.rateLimitPerFiveMinutes !== undefined) {
    problems.push(
      'rateLimitPerFiveMinutes creates a web ACL; it cannot be combined with webAclId (add a rate-based rule to that web ACL instead)',
    );
  }
  if (
    props.cdnLogs !== undefined &&
    (props.cdnLogs.logGroup === undefined) === (props.cdnLogs.bucket === undefined)
  ) {
    problems.push('cdnLogs needs exactly one of logGroup or bucket');
  }
  if (
    props.vpc === undefined &&
    (props.vpcSubnets !== undefined || props.securityGroups !== undefined)
  ) {
    problems.push('vpcSubnets and securityGroups need vpc');
  }
  if (props.upstreamSecret !== undefined && props.upstreamSecret.secretFullArn === undefined) {
    problems.push(`upstreamSecret ${COMPLETE_ARN}`);
  }
  const webhook = props.revalidateWebhookSecret;
  if (webhook !== undefined && webhook.secretFullArn === undefined) {
    problems.push(`revalidateWebhookSecret ${COMPLETE_ARN}`);
  }
  return problems;
}
