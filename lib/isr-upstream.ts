/**
 * The upstream as a CloudFront origin, for the requests the edge routes past the origin function
 * (static assets, bypass paths, other methods, bypass cookies and headers). Reached over https
 * only (TLS 1.2), as the functions reach it: the host, port and path of `renderOriginUrl`. A
 * private upstream is reached through a CloudFront VPC origin (`upstreamVpcOrigin`). The shared
 * secret travels as a custom origin header whose value CloudFormation resolves from Secrets
 * Manager at deploy (a dynamic reference: the template never holds it), so CloudFront sends it
 * with every request and overwrites one a viewer sent.
 */
import { Annotations, Duration, SecretValue } from 'aws-cdk-lib';
import {
  OriginProtocolPolicy,
  OriginSslPolicy,
  VpcOrigin as CloudFrontVpcOrigin,
  type IOrigin,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, VpcOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { Construct } from 'constructs';
import { UPSTREAM_ORIGIN_ID } from './edge/viewer-request-function.js';
import { stackRegionName } from './isr-names.js';
import { edgeUpstreamUrl } from './isr-prop-rules.js';
import type { IsrServiceProps } from './isr-service-props.js';
import type { IsrSettings } from './isr-settings.js';

/** CloudFront's default origin response timeout quota. */
const MAX_READ_TIMEOUT_SECONDS = 60;
/** VPC origin names: at most 64 characters, unique per account. */
const MAX_VPC_ORIGIN_NAME_LENGTH = 64;

/**
 * The upstream origin, or undefined when CloudFront has none to route to: the demo renderer,
 * or a plain-http loopback upstream (a development setting CloudFront cannot reach; synth says so).
 */
export function createUpstreamOrigin(
  scope: Construct,
  settings: IsrSettings,
  props: IsrServiceProps,
): IOrigin | undefined {
  const url = edgeUpstreamUrl(settings.renderOriginUrl);
  if (url === undefined) {
    if (settings.renderOriginUrl !== undefined) {
      Annotations.of(scope).addWarningV2(
        'facetheory-isr:upstream-not-routed',
        `renderOriginUrl ${settings.renderOriginUrl} is not https: CloudFront cannot reach it, so nothing is routed to it at the edge`,
      );
    }
    return undefined;
  }
  const options = {
    originId: UPSTREAM_ORIGIN_ID,
    originPath: url.pathname.replace(/\/+$/, '') || undefined,
    readTimeout: Duration.seconds(
      Math.min(settings.originTimeout.toSeconds(), MAX_READ_TIMEOUT_SECONDS),
    ),
    customHeaders: secretHeader(settings),
  };
  const httpsPort = url.port === '' ? undefined : Number(url.port);
  const tls = {
    protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
    originSslProtocols: [OriginSslPolicy.TLS_V1_2],
    httpsPort,
  };
  if (props.upstreamVpcOrigin === undefined) {
    return new HttpOrigin(url.hostname, { ...options, ...tls });
  }
  const vpcOrigin = new CloudFrontVpcOrigin(scope, 'UpstreamVpcOrigin', {
    endpoint: props.upstreamVpcOrigin,
    vpcOriginName: stackRegionName(scope, 'upstream', MAX_VPC_ORIGIN_NAME_LENGTH),
    ...tls,
  });
  return VpcOrigin.withVpcOrigin(vpcOrigin, { ...options, domainName: url.hostname });
}

/**
 * The secret as CloudFormation resolves it at deploy: pinned to `upstreamSecretVersionId` when
 * given, so a rotation changes the template and CloudFormation reads the secret again.
 */
function secretHeader(settings: IsrSettings): Record<string, string> | undefined {
  const secret = settings.upstreamSecret;
  if (secret === undefined) return undefined;
  const value = SecretValue.secretsManager(secret.arn, {
    versionId: settings.upstreamSecretVersionId,
  });
  return { [secret.header]: value.unsafeUnwrap() };
}
