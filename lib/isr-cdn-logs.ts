/**
 * CloudFront standard logging v2: CloudWatch Logs vended log delivery (a delivery source for the
 * distribution, a destination, and the delivery pairing them) to a log group or a bucket. Unlike
 * legacy standard logs, the bucket needs no ACLs, so it can keep BucketOwnerEnforced.
 */
import { ArnFormat, Stack } from 'aws-cdk-lib';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnDelivery, CfnDeliveryDestination, CfnDeliverySource } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { stackRegionName } from './isr-names.js';
import { requireUsEast1 } from './isr-region.js';
import type { CdnLogsDestination } from './isr-service-props.js';

/** Delivery source and destination names: at most 60 characters, unique per account and region. */
const MAX_DELIVERY_NAME_LENGTH = 60;

export interface CdnLogDelivery {
  readonly source: CfnDeliverySource;
  readonly destination: CfnDeliveryDestination;
  readonly delivery: CfnDelivery;
}

/**
 * Access logs of `distribution` as JSON records. CloudWatch Logs adds the log group's resource
 * policy when the delivery is created; for a bucket of this stack the bucket policy is written
 * here (a policy CloudWatch Logs added itself would be overwritten by the next deploy).
 */
export function createCdnLogDelivery(
  scope: Construct,
  distribution: IDistribution,
  destination: CdnLogsDestination,
): CdnLogDelivery {
  requireUsEast1(scope, 'CdnLogsRegion', 'cdnLogs (CloudFront standard logging v2)');
  const stack = Stack.of(scope);
  const source = new CfnDeliverySource(scope, 'CdnLogSource', {
    name: stackRegionName(scope, 'cdn', MAX_DELIVERY_NAME_LENGTH),
    logType: 'ACCESS_LOGS',
    resourceArn: stack.formatArn({
      service: 'cloudfront',
      region: '',
      resource: 'distribution',
      resourceName: distribution.distributionId,
    }),
  });
  const target = new CfnDeliveryDestination(scope, 'CdnLogDestination', {
    name: stackRegionName(scope, 'cdn-logs', MAX_DELIVERY_NAME_LENGTH),
    destinationResourceArn: destinationArn(destination),
    outputFormat: 'json',
  });
  const bucket = destination.bucket;
  bucket?.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudFrontStandardLogsV2',
      principals: [new ServicePrincipal('delivery.logs.amazonaws.com')],
      actions: ['s3:PutObject'],
      resources: [bucket.arnForObjects('*')],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: { 'aws:SourceArn': source.attrArn },
      },
    }),
  );
  const delivery = new CfnDelivery(scope, 'CdnLogDelivery', {
    deliverySourceName: source.name,
    deliveryDestinationArn: target.attrArn,
  });
  delivery.node.addDependency(source);
  return { source, destination: target, delivery };
}

/** A log group's ARN without the `:*` suffix CDK's `logGroupArn` carries; a bucket's ARN. */
function destinationArn(destination: CdnLogsDestination): string {
  const { logGroup, bucket } = destination;
  if (logGroup !== undefined) {
    return Stack.of(logGroup).formatArn({
      service: 'logs',
      region: logGroup.env.region,
      account: logGroup.env.account,
      resource: 'log-group',
      resourceName: logGroup.logGroupName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }
  if (bucket !== undefined) return bucket.bucketArn;
  throw new Error('cdnLogs needs exactly one of logGroup or bucket');
}
