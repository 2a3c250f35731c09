/**
 * Props of `IsrService`, in a file of their own so every `lib/` module can read them without
 * importing the construct (no import cycles).
 */
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { GeoRestriction, IDistribution, VpcOriginEndpoint } from 'aws-cdk-lib/aws-cloudfront';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { SettingProps } from '../lambda/core/settings/index.js';
import type { DeploySettingProps } from './isr-deploy-settings.js';

/**
 * Where CloudFront standard logs (v2: delivered by CloudWatch Logs, no ACLs needed) go; exactly
 * one of the two. Delivery permissions are added by CloudWatch Logs when the delivery is created.
 */
export interface CdnLogsDestination {
  /** @default - no log group */
  readonly logGroup?: ILogGroup;
  /** @default - no bucket */
  readonly bucket?: IBucket;
}

/**
 * Everything the pages, the functions, the edge and the alarms can be told. The settings come
 * from two tables, each entry documenting its prop: what the functions read
 * (`lambda/core/settings/table.ts`) and what only the construct reads
 * (`isr-deploy-settings.ts`); docs/SETTINGS.md lists them all. The props below name resources.
 */
export interface IsrServiceProps extends SettingProps, DeploySettingProps {
  /**
   * Derives the tenant at the edge: a CloudFront Function maps the request's `Host` (lower-case,
   * no port) to its tenant and overwrites any `tenantHeader` the viewer sent, so a viewer cannot
   * read or fill another tenant's cache; an unknown host gets 421. Needs `tenantHeader`; the
   * tenants it names become `tenants` unless that is set. Without it, whatever sends requests
   * to CloudFront must set the header itself, and the origin trusts it.
   * @default - the tenant header is taken as the viewer sent it
   */
  readonly tenantsByHost?: Readonly<Record<string, string>>;
  /**
   * An existing cache table instead of a new one (shared with FaceTheory or TableTheory
   * services, or managed elsewhere). It needs string keys `pk`/`sk`, TTL on `ttl` and the sparse
   * index `status-index` (`status_shard` string, `status_at` number, all attributes): synth
   * checks a table of this app and fails naming what is missing; an imported one gets a
   * warning. A customer managed key is granted to the functions. `removalPolicy` does not
   * apply to it. See docs/DEPLOY.md.
   * @default - a new TableV2: on demand, point-in-time recovery, deletion protection
   */
  readonly table?: ITable;
  /**
   * An existing bucket for page bodies instead of a new one. It must be versioned (synth checks
   * a bucket of this app): a retired body is kept as a noncurrent version. A bucket of this app
   * also gets rules expiring noncurrent bodies under `bodyKeyPrefix` after
   * `supersededBodyExpirationDays`; an imported one must have them. Only objects under
   * `bodyKeyPrefix` are touched. A customer managed key is granted to the origin and worker.
   * @default - a new private, versioned, SSE-S3 bucket, TLS only
   */
  readonly bucket?: IBucket;
  /**
   * An existing CloudFront `Distribution` of the same stack (its certificate, WAF, logging and
   * behaviours stay yours) to add the pages to, instead of a new one: the service adds the
   * behaviour `pathPattern` and, with an upstream, its static and bypass behaviours, its
   * origins, its viewer-request function (on those behaviours only), its policies and the
   * cache-tag header. An imported distribution cannot be changed, so synth refuses it; one
   * service per distribution. See docs/DEPLOY.md.
   * @default - a new distribution, the pages on its default behaviour
   */
  readonly distribution?: IDistribution;
  /**
   * The path pattern of the pages' behaviour on `distribution` (e.g. `/blog/*`); the default
   * behaviour stays the distribution's own. Needed with `distribution`, and only with it.
   * @default - the default behaviour of the service's own distribution
   */
  readonly pathPattern?: string;
  /**
   * VPC for both functions, so they can reach a private upstream. They then need a route to
   * DynamoDB, S3, SQS and Secrets Manager (NAT or VPC endpoints).
   * @default - not in a VPC
   */
  readonly vpc?: IVpc;
  /**
   * Subnets of `vpc` the functions run in.
   * @default - the VPC's private subnets with egress
   */
  readonly vpcSubnets?: SubnetSelection;
  /**
   * Security groups of both functions in `vpc`.
   * @default - one per function, outbound only
   */
  readonly securityGroups?: ISecurityGroup[];
  /**
   * A private upstream (an internal load balancer or an instance) CloudFront reaches through a
   * CloudFront VPC origin, for the requests the edge routes past the origin function. The
   * connection is https to the host of `renderOriginUrl` (its certificate must name it), and
   * the endpoint's security group must admit CloudFront's VPC origin service group. The
   * functions reach the same URL from `vpc`.
   * @default - the upstream is reached at its public address
   */
  readonly upstreamVpcOrigin?: VpcOriginEndpoint;
  /**
   * Secret sent to the upstream in `upstreamSecretHeader`, so it can refuse anyone else. Only
   * its ARN reaches the functions (`ISR_UPSTREAM_SECRET_ARN`); they may read this secret only.
   * CloudFront sends it too, for what the edge routes to the upstream: CloudFormation resolves
   * it into the upstream origin's custom header at deploy (a dynamic reference, never in the
   * template), so whoever may read the distribution's configuration may read it. Rotating it
   * takes a deploy with `upstreamSecretVersionId` (docs/DEPLOY.md). Needs a complete ARN (a
   * Secret of this app, or `Secret.fromSecretCompleteArn`).
   * @default - no secret header
   */
  readonly upstreamSecret?: ISecret;
  /**
   * HMAC key for webhook senders that cannot sign SigV4 (CMS webhooks). Set, the revalidate
   * function URL takes no IAM auth (`NONE`) and every request must carry a valid
   * `x-isr-signature` over `x-isr-timestamp` and the raw body; the function may read this secret
   * only, through the Parameters and Secrets extension. Needs a complete ARN.
   * @default - the revalidate URL requires SigV4 (`AWS_IAM`); see `grantRevalidate`
   */
  readonly revalidateWebhookSecret?: ISecret;
  /**
   * Topic every alarm notifies, on alarm and when it is OK again.
   * @default - alarms without actions (see `addAlarmAction`)
   */
  readonly alarmTopic?: ITopic;
  /**
   * Custom domain names; with `certificate`, viewers are held to TLS 1.2 or later.
   * @default - the distribution's cloudfront.net name only
   */
  readonly domainNames?: string[];
  /**
   * ACM certificate (in us-east-1) for `domainNames`.
   * @default - the default CloudFront certificate
   */
  readonly certificate?: ICertificate;
  /**
   * AWS WAF web ACL (ARN) in front of the distribution; not with `rateLimitPerFiveMinutes`.
   * @default - no WAF
   */
  readonly webAclId?: string;
  /**
   * Countries served or refused.
   * @default - served everywhere
   */
  readonly geoRestriction?: GeoRestriction;
  /**
   * Bucket for legacy CloudFront standard logs (`cloudfront/`) and the body bucket's S3 server
   * access logs (`s3-bodies/`); CloudFront's legacy logs need ACL writes (ObjectWriter).
   * @default - no access logs
   */
  readonly accessLogsBucket?: IBucket;
  /**
   * CloudFront standard logging v2 to a log group or bucket (no ACLs). The delivery source must
   * be in us-east-1, so the stack must be there.
   * @default - no standard logs v2
   */
  readonly cdnLogs?: CdnLogsDestination;
}
