/**
 * Rules of the props that name resources rather than settings (the edge's tenant table, secrets,
 * logs, the network, WAF): checked at synth only, since no function reads them.
 */
import { viewerRequestFunctionProblems } from './edge/viewer-request-function.js';
import type { IsrServiceProps } from './isr-service-props.js';

/** The settings the tenant table must agree with. */
interface Tenancy {
  readonly tenantHeader: string | undefined;
  readonly tenants: readonly string[] | undefined;
}

/** `tenantsByHost` derives the tenant at the edge: it needs the header and served tenants. */
export function tenancyProblems(s: Tenancy, props: IsrServiceProps): string[] {
  if (props.tenantsByHost === undefined) return [];
  if (s.tenantHeader === undefined) return ['tenantsByHost needs tenantHeader'];
  const problems = viewerRequestFunctionProblems({
    tenantHeader: s.tenantHeader,
    tenantsByHost: props.tenantsByHost,
  });
  const unserved = Object.values(props.tenantsByHost).filter(
    (tenant) => !(s.tenants ?? []).includes(tenant),
  );
  if (unserved.length > 0) {
    problems.push(`tenantsByHost names tenants outside tenants: ${unserved.join(', ')}`);
  }
  return problems;
}

const COMPLETE_ARN =
  'needs a complete ARN (a Secret of this app, or Secret.fromSecretCompleteArn), so the grant names exactly one secret';

/** Props naming resources that cannot take effect as given. */
export function resourceProblems(props: IsrServiceProps): string[] {
  const problems: string[] = [];
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
