/**
 * cdk-nag (AwsSolutions) findings the service accepts on purpose, each with its reason. Each one
 * disappears when the prop that fixes it is set; everything else is fixed, not acknowledged.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { IConstruct } from 'constructs';
import { BODY_KEY_PREFIX } from '../lambda/core/rows.js';
import type { IsrService, IsrServiceProps } from './isr-service.js';

const acknowledge = (scope: IConstruct, id: string, reason: string) =>
  Validations.of(scope).acknowledge({ id, reason });

export function acknowledgeNagFindings(service: IsrService, props: IsrServiceProps): void {
  const bucketId = Stack.of(service).getLogicalId(service.bucket.node.defaultChild as CfnBucket);
  for (const [fn, role] of [
    [service.originFunction, service.originRole],
    [service.workerFunction, service.workerRole],
  ] as const) {
    acknowledge(
      fn,
      'AwsSolutions-L1',
      'Pinned to nodejs22.x on purpose: bundles target node22 and the code is tested on it; a runtime upgrade is a deliberate change.',
    );
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${BODY_KEY_PREFIX}*]`,
      'Object actions on page bodies of this bucket only: every render writes a new, unpredictable key under pages/.',
    );
  }
  const { bucket, distribution } = service;
  if (props.accessLogsBucket === undefined) {
    acknowledge(
      bucket,
      'AwsSolutions-S1',
      'Server access logs are opt-in via accessLogsBucket; only the two service roles touch this bucket, and CloudTrail records them.',
    );
    acknowledge(
      distribution,
      'AwsSolutions-CFR3',
      'CloudFront standard logs need an ACL-enabled log bucket the service does not own; opt in via accessLogsBucket.',
    );
  }
  if (props.certificate === undefined) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR4',
      'The default *.cloudfront.net certificate cannot enforce a TLS minimum; pass domainNames + certificate to get TLSv1.2_2021.',
    );
  }
  if (props.webAclId === undefined) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR2',
      'WAF is opt-in via webAclId (a web ACL has per-request cost and site-specific rules); the origin only serves GET/HEAD.',
    );
  }
  if (props.geoRestriction === undefined) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR1',
      'Public pages are served worldwide by default; restrict countries via geoRestriction.',
    );
  }
}
