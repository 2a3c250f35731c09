/**
 * cdk-nag (AwsSolutions) findings the service accepts on purpose, each with its true reason.
 * Each one disappears when the prop that fixes it is set (CFR3 with `cdnLogs` is acknowledged
 * instead, because cdk-nag's rule only sees legacy logging); everything else is fixed.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { Distribution } from 'aws-cdk-lib/aws-cloudfront';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import type { IsrServiceProps } from './isr-service-props.js';

const acknowledge = (scope: IConstruct, id: string, reason: string) =>
  Validations.of(scope).acknowledge({ id, reason });

/** The constructs findings are acknowledged on. */
export interface NagSubjects {
  readonly bucket: IBucket;
  /** False for a bucket the user brought: its own findings are the user's to answer. */
  readonly ownBucket: boolean;
  /** Undefined for a distribution the user brought: its findings are the user's to answer. */
  readonly distribution: Distribution | undefined;
  /** `bodies: false` for a function with no bucket access (the revalidate function). */
  readonly functions: readonly {
    readonly fn: IFunction;
    readonly role: IRole;
    readonly bodies?: boolean;
  }[];
  readonly bodyKeyPrefix: string;
}

export function acknowledgeNagFindings(subjects: NagSubjects, props: IsrServiceProps): void {
  const { bucket, distribution } = subjects;
  acknowledgeFunctionFindings(subjects, props);
  // A bucket or distribution the user brought is theirs to log, certify and protect or not.
  if (props.accessLogsBucket === undefined && subjects.ownBucket) {
    acknowledge(
      bucket,
      'AwsSolutions-S1',
      'Server access logs are opt-in via accessLogsBucket (they cost storage per request). Without them, reads and writes of bodies are not recorded: CloudTrail logs S3 object-level operations only when a trail enables data events. Only the two service roles can reach the bucket (public access blocked, TLS only).',
    );
  }
  if (distribution !== undefined) acknowledgeDistributionFindings(distribution, props);
}

/** The runtime pin, and the body-object and VPC wildcards, on each function and its role. */
function acknowledgeFunctionFindings(subjects: NagSubjects, props: IsrServiceProps): void {
  const { bucket } = subjects;
  const bodyObjects = flattenReference(
    Stack.of(bucket).resolve(bucket.arnForObjects(`${subjects.bodyKeyPrefix}*`)),
  );
  for (const { fn, role, bodies = true } of subjects.functions) {
    acknowledge(
      fn,
      'AwsSolutions-L1',
      'Pinned to nodejs22.x on purpose: bundles target node22 and the code is tested on it; a runtime upgrade is a deliberate change.',
    );
    if (!bodies) continue;
    acknowledge(
      role,
      `AwsSolutions-IAM5[Resource::${bodyObjects}]`,
      `Object actions on page bodies of this bucket only: every render writes a new, unpredictable key under ${subjects.bodyKeyPrefix}.`,
    );
    if (props.vpc !== undefined) {
      acknowledge(
        role,
        'AwsSolutions-IAM5[Resource::*]',
        "VPC placement: Lambda creates and deletes the function's network interfaces with this role, EC2 gives the Describe actions no resource scope and the interface IDs are not known in advance; a Deny keeps these actions from the function's own code.",
      );
    }
  }
}

/** The service's own distribution: each finding a prop would fix. */
function acknowledgeDistributionFindings(distribution: Distribution, props: IsrServiceProps) {
  if (props.accessLogsBucket === undefined && props.cdnLogs === undefined) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR3',
      'CloudFront standard logs are opt-in (billed per log line delivered): set cdnLogs for standard logging v2 to a log group or bucket (no ACLs needed), or accessLogsBucket for legacy logs.',
    );
  }
  if (props.accessLogsBucket === undefined && props.cdnLogs !== undefined) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR3',
      "Standard logging v2 is on (cdnLogs: AWS::Logs::Delivery of the distribution's access logs); cdk-nag's CFR3 only recognises the legacy Logging property of the distribution.",
    );
  }
  if (props.certificate === undefined) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR4',
      'The default *.cloudfront.net certificate cannot enforce a TLS minimum; pass domainNames + certificate to get TLSv1.2_2021.',
    );
  }
  if (props.webAclId === undefined && props.rateLimitPerFiveMinutes === undefined) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR2',
      'No web ACL by default because WAF bills per web ACL, rule and request; without one nothing limits requests per client (reserved concurrency only caps the origin). Set rateLimitPerFiveMinutes for a per-IP rate-based rule, or webAclId for your own web ACL.',
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

/**
 * A resolved CloudFormation value as cdk-nag spells it in a finding's id (its
 * flattenCfnReference): `<Id.Arn>` for a GetAtt, `<Id>` for a Ref, joins joined. An imported
 * bucket's ARN is a literal with the partition: `arn:<AWS::Partition>:s3:::name/pages/*`.
 */
export function flattenReference(value: unknown): string {
  if (typeof value === 'string') return value.replace(/\$\{/g, '<').replace(/}/g, '>');
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const node = value as Record<string, unknown>;
  if (Array.isArray(node['Fn::Join'])) {
    const [delimiter, items] = node['Fn::Join'] as [string, unknown[]];
    return items.map(flattenReference).join(delimiter);
  }
  if ('Fn::Sub' in node) return flattenReference(node['Fn::Sub']);
  if (Array.isArray(node['Fn::GetAtt'])) {
    const [resource, attribute] = node['Fn::GetAtt'] as unknown[];
    return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
  }
  if ('Fn::ImportValue' in node) return flattenReference(node['Fn::ImportValue']);
  if ('Ref' in node) return `<${flattenReference(node.Ref)}>`;
  return JSON.stringify(value);
}
