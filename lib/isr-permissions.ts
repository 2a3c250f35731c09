/**
 * What each function's role may do, written out action by action: the grant helpers of the
 * L2 constructs (grantReadWriteData, grantReadWrite) add Scan, Query, batch and listing actions
 * the service never needs. Every statement names this service's table, bucket or queue only.
 *
 * - origin: Get/Put/Update/Delete/ConditionCheckItem on the table; GetObject and PutObject on
 *   `pages/*` (no DeleteObject) and ListBucket on the bucket; SendMessage to the queue.
 * - worker: Get/Put/Update/Delete/ConditionCheckItem on the table; Query on `TAG#` partitions
 *   only (a revalidation's fan-out step); PutObject and DeleteObject on `pages/*`; consume the
 *   queue (granted by its event source); SendMessage to the DLQ, to the queue (the next step)
 *   and to the purge queue (a soft purge, a tag's deadline). Nothing on CloudFront.
 * - a function that purges the CDN (the revalidate function, the sweeper, the purger), when
 *   granted with `grantCdnInvalidation`: CreateInvalidation on this distribution only.
 * - purger: consume the purge queue (granted by its event source); SendMessage to the purge DLQ;
 *   PutItem on the pending-purge rows only (a purge CloudFront keeps throttling).
 * - sweeper: Query on the status index; GetItem/Query on the table (META, LOCK, VER# and its
 *   cursor row); PutItem on its cursor row only (`dynamodb:LeadingKeys`); Put/DeleteItem on its
 *   lease's partition only (one sweep at a time); Put/Update/DeleteItem on
 *   the pending-purge rows only; ConditionCheckItem/DeleteItem on the table for VER# rows META no
 *   longer lists, the tag index rows of gone pages and the deferred intents it re-queued; SendMessage to the queue (a stalled fan-out); UpdateItem on page partitions only (a
 *   REQ# row a later publish made moot leaves the status index); ListBucket under the body prefix;
 *   DeleteObject on `pages/*`. No PutObject/GetObject.
 * - revalidate: Get/Put/Update/Delete/ConditionCheckItem and Query on the table; BatchGetItem on
 *   `TAG#` partitions only (a data cache's read of tag times); SendMessage to the queue and the
 *   purge queue (a deadline purge); GetSecretValue on the webhook secret when HMAC mode is on. No
 *   bucket access.
 * - origin and worker, when configured: GetSecretValue on the upstream secret only; the network-interface
 *   actions Lambda needs to place a function in a VPC, denied to the function's own code.
 */
import { Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IDistribution } from 'aws-cdk-lib/aws-cloudfront';
import {
  Effect,
  Grant,
  PolicyStatement,
  Role,
  ServicePrincipal,
  type IGrantable,
  type IRole,
} from 'aws-cdk-lib/aws-iam';
import { ViaServicePrincipal } from 'aws-cdk-lib/aws-kms';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import {
  PENDING_PURGES_PK,
  StatusIndex,
  SWEEP_LEASE_PK,
  SweepCursorKey,
} from '../lambda/core/page/rows.js';
import type { FunctionKind } from '../lambda/core/settings/index.js';
import type { IsrServiceProps } from './isr-service-props.js';

/**
 * Item actions of the lease + publish protocol, which both functions run (the origin for the
 * misses it renders). A TransactWriteItems call is authorised per item by these same actions
 * (there is no IAM action named after the transaction). DeleteItem releases the caller's
 * own LOCK (conditioned on its token), deletes the VER# rows a publish dropped from META's kept
 * list and, in the worker, drops a REQ# claim that is still STARTED so a retry can take it.
 * BatchWriteItem keeps the tag index (a page's `TAG#` rows, written before the publish that gives
 * it a tag) and BatchGetItem reads when its tags were last revalidated: neither reaches an item
 * Put/Delete/GetItem could not. ConditionCheckItem guards the removal of a tag a page lost (META
 * and LOCK checked in the Delete's transaction). No Scan, Query or table-level action for the
 * worker; the origin's one extra action is below.
 */
export const CACHE_TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:BatchGetItem',
] as const;

/**
 * The origin reads bodies and writes the body of a miss it renders. It may not delete objects,
 * so a compromised or buggy origin cannot remove a live page: what it cannot delete (a body it
 * lost the publish for, a version its publish dropped) is left to the sweeper.
 */
export const ORIGIN_BODY_ACTIONS = ['s3:GetObject', 's3:PutObject'] as const;

/**
 * The worker writes bodies and deletes the ones nothing points to (the orphan of a publish it
 * lost, the versions a publish dropped); in the versioned bucket a delete keeps the body as a
 * noncurrent version for the retention period. It never reads a body (only the origin serves
 * them), so no GetObject, and no DeleteObjectVersion: it cannot erase for good.
 */
export const WORKER_BODY_ACTIONS = ['s3:PutObject', 's3:DeleteObject'] as const;

/**
 * An own role per function instead of AWSLambdaBasicExecutionRole, so it logs only to its own
 * group. VPC networking and the upstream secret are granted here when configured.
 */
export function createFunctionRole(
  scope: Construct,
  kind: FunctionKind,
  props: Pick<IsrServiceProps, 'vpc' | 'upstreamSecret' | 'revalidateWebhookSecret'>,
): Role {
  const role = new Role(scope, ROLE_IDS[kind], {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `ISR ${kind} function`,
  });
  // The revalidate function stays outside the VPC: it talks to DynamoDB and SQS only.
  if (kind === 'revalidate') {
    if (props.revalidateWebhookSecret !== undefined) {
      grantSecret(role, props.revalidateWebhookSecret, 'RevalidateWebhookSecret');
    }
    return role;
  }
  if (props.vpc !== undefined) grantVpcNetworking(role);
  if (props.upstreamSecret !== undefined) grantUpstreamSecret(role, props.upstreamSecret);
  return role;
}

const ROLE_IDS: Readonly<Record<FunctionKind, string>> = {
  origin: 'OriginRole',
  worker: 'WorkerRole',
  revalidate: 'RevalidateRole',
  sweeper: 'SweeperRole',
  purger: 'PurgerRole',
};

/**
 * Item actions of a revalidation: GetItem/PutItem/UpdateItem/DeleteItem for its REQ# row (read,
 * claim, settle, release) and the marks (LOCK and META updates, META deleted by `expire`, each
 * tag's STATE put), Query for the pages under a tag (`TAG#` partitions), ConditionCheckItem with
 * DeleteItem for the index rows of pages it finds gone (guarded by META and LOCK in one
 * transaction). No Scan, no batch: it never publishes.
 */
export const REVALIDATE_TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:Query',
] as const;

/**
 * The revalidate function's data access: the table items above and SendMessage to the
 * regeneration queue (`regenerate: true`). No bucket access at all; the CDN grant is separate.
 */
export function grantRevalidateAccess(role: IRole, resources: ServiceResources): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'RevalidationItems',
      actions: [...REVALIDATE_TABLE_ACTIONS],
      resources: [resources.table.tableArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'EnqueueRegeneration',
      actions: ['sqs:SendMessage'],
      resources: [resources.queue.queueArn],
    }),
  );
  role.addToPrincipalPolicy(queuePurgesStatement(resources));
  // The tag-times read (core/revalidate/tag-times.ts): BatchGetItem of tags' STATE rows, on `TAG#`
  // partitions only. DynamoDB checks dynamodb:LeadingKeys on each key of a BatchGetItem:
  // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ReadTagTimes',
      actions: ['dynamodb:BatchGetItem'],
      resources: [resources.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [TAG_PARTITIONS] } },
    }),
  );
}

/** SendMessage to the purge queue: a soft purge, a deadline purge (delayed). */
const queuePurgesStatement = (resources: Pick<ServiceResources, 'purgeQueue'>) =>
  new PolicyStatement({
    sid: 'QueueCdnPurges',
    actions: ['sqs:SendMessage'],
    resources: [resources.purgeQueue.queueArn],
  });

export interface ServiceResources {
  readonly table: ITable;
  readonly bucket: IBucket;
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** Where CDN purges wait for the purger (soft purges and deadlines), and its DLQ. */
  readonly purgeQueue: IQueue;
  readonly purgeDeadLetterQueue: IQueue;
  /** Object permissions are scoped to `<bodyKeyPrefix>*`. */
  readonly bodyKeyPrefix: string;
}

/**
 * The origin reads a page as one strongly consistent Query on `pk` with `begins_with(sk, 'META')`
 * (META and its hit-for-pass mark, META#PASS, in one round trip): its only Query. IAM cannot
 * scope a Query to a sort-key prefix; the key condition in `adapters/cache-table/dynamodb.ts`
 * does, and no Scan is granted.
 */
export const ORIGIN_TABLE_ACTIONS = [...CACHE_TABLE_ACTIONS, 'dynamodb:Query'] as const;

/** The origin's data access; its log and invoke permissions are wired by the construct. */
export function grantOriginAccess(role: IRole, resources: ServiceResources): void {
  const { table, bucket, queue } = resources;
  role.addToPrincipalPolicy(cacheTableStatement(table, ORIGIN_TABLE_ACTIONS));
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'PageBodies',
      actions: [...ORIGIN_BODY_ACTIONS],
      resources: [bucket.arnForObjects(`${resources.bodyKeyPrefix}*`)],
    }),
  );
  // Without ListBucket, S3 answers a GetObject for a missing key with 403, not 404, and the
  // origin could not tell a missing body (re-render it) from a real denial (503).
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'MissingBodyIs404',
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'EnqueueRegeneration',
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
    }),
  );
}

/** The worker's data access; consuming the queue is granted by its event source. */
export function grantWorkerAccess(role: IRole, resources: ServiceResources): void {
  const { table, bucket, deadLetterQueue } = resources;
  role.addToPrincipalPolicy(cacheTableStatement(table));
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'PageBodies',
      actions: [...WORKER_BODY_ACTIONS],
      resources: [bucket.arnForObjects(`${resources.bodyKeyPrefix}*`)],
    }),
  );
  // A revalidation's fan-out step reads one batch of a tag's index rows: Query on `TAG#`
  // partitions only (its marks and rows are the item actions above).
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'FanOutTagIndex',
      actions: ['dynamodb:Query'],
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [TAG_PARTITIONS] } },
    }),
  );
  // Each fan-out step queues the next (and `regenerate: true` intents) on the same queue.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'FanOutNextStep',
      actions: ['sqs:SendMessage'],
      resources: [resources.queue.queueArn],
    }),
  );
  // A poison message goes to the DLQ with its reason, then is acknowledged.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'DeadLetterWithReason',
      actions: ['sqs:SendMessage'],
      resources: [deadLetterQueue.queueArn],
    }),
  );
  // A published page's soft purge, a tag's deadline purge: the purger makes the invalidation.
  role.addToPrincipalPolicy(queuePurgesStatement(resources));
}

/**
 * The purger's data access; consuming the purge queue is granted by its event source and the
 * purge by `wireCdnPurge`. A purge CloudFront keeps throttling is kept as a row of the pending
 * purges' partition (PutItem, conditioned on the row's absence, on that partition only) for the
 * sweeper, which retries and removes it. No other table access, no bucket, no other queue.
 */
export function grantPurgerAccess(
  role: IRole,
  resources: Pick<ServiceResources, 'table' | 'purgeDeadLetterQueue'>,
): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'PendingCdnPurges',
      actions: ['dynamodb:PutItem'],
      resources: [resources.table.tableArn],
      conditions: {
        'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [PENDING_PURGES_PK] },
      },
    }),
  );
  // A purge it cannot read, or CloudFront refuses for good, goes to the DLQ with its reason.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'DeadLetterWithReason',
      actions: ['sqs:SendMessage'],
      resources: [resources.purgeDeadLetterQueue.queueArn],
    }),
  );
}

/**
 * The sweeper reads what needs an operator from the status index (Query on the index only),
 * reads a page's LOCK, META and VER# rows to decide whether a body is still pointed to (GetItem
 * and Query on the table), and writes three kinds of row: its listing cursor (PutItem, on that
 * row's partition key only), the VER# rows META no longer lists (deleted, guarded by META), and
 * the pending CDN purges (attempts recorded, accepted ones deleted, on their partition only).
 * It lists the body prefix only and retires (deletes, recoverably) bodies.
 */
export const SWEEPER_TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query'] as const;
/**
 * Deleting the VER# rows META no longer lists, and the tag index rows of a page whose META is
 * gone: a TransactWriteItems of ConditionChecks on META (and LOCK) and a Delete of the row,
 * authorised by those item actions. IAM cannot scope them by sort key and pages are any
 * partition, so they cover the table; the conditions on META and LOCK are the real guard.
 * The same DeleteItem removes a deferred intent (`ISR#DEFERRED`, the regeneration budget) once
 * the catch-up has queued it again, unconditioned: it is sent before it is deleted.
 */
export const SWEEPER_VERSION_ACTIONS = [
  'dynamodb:ConditionCheckItem',
  'dynamodb:DeleteItem',
] as const;
export const SWEEPER_BODY_ACTIONS = ['s3:DeleteObject'] as const;
/** The tag index's partitions (`TAG#<tenant>#<tag>`): what a fan-out step Queries. */
export const TAG_PARTITIONS = 'TAG#*';
/** Page partitions (`core/page/rows.ts` `partitionKey`): the REQ# rows the sweeper may resolve live there. */
export const PAGE_PARTITIONS = ['CACHE#*', 'TENANT#*'] as const;

export function grantSweeperAccess(
  role: IRole,
  resources: Pick<ServiceResources, 'table' | 'bucket' | 'bodyKeyPrefix' | 'queue'>,
): void {
  const { table, bucket, bodyKeyPrefix } = resources;
  // A revalidation fan-out that stopped is resent from its stored cursor (`pk = FANOUT` rows,
  // read with the Query above).
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ResumeFanOuts',
      actions: ['sqs:SendMessage'],
      resources: [resources.queue.queueArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'StatusIndex',
      actions: ['dynamodb:Query'],
      resources: [`${table.tableArn}/index/${StatusIndex.Name}`],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'PageReferences',
      actions: [...SWEEPER_TABLE_READ_ACTIONS],
      resources: [table.tableArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ForgetUnlistedVersions',
      actions: [...SWEEPER_VERSION_ACTIONS],
      resources: [table.tableArn],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'SweepCursor',
      actions: ['dynamodb:PutItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SweepCursorKey.pk] },
      },
    }),
  );
  // One sweep at a time: each run takes and releases its LOCK row (core/operate/sweep-lease.ts).
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'SweepLease',
      actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SWEEP_LEASE_PK] },
      },
    }),
  );
  // A FAILED or lost REQ# row of a page published since is resolved (core/operate/resolve-work.ts).
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ResolveMootWork',
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...PAGE_PARTITIONS] },
      },
    }),
  );
  // Purges CloudFront refused while throttled are rows of one partition; the sweeper submits
  // them again, records each attempt, removes the ones CloudFront accepted and sets aside (a
  // row of the same partition) the ones it refused for good.
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'PendingCdnPurges',
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [PENDING_PURGES_PK] },
      },
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'ListBodies',
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${bodyKeyPrefix}*`] } },
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'RetireOrphanBodies',
      actions: [...SWEEPER_BODY_ACTIONS],
      resources: [bucket.arnForObjects(`${bodyKeyPrefix}*`)],
    }),
  );
}

function cacheTableStatement(
  table: ITable,
  actions: readonly string[] = CACHE_TABLE_ACTIONS,
): PolicyStatement {
  return new PolicyStatement({
    sid: 'CacheTableItems',
    actions: [...actions],
    resources: [table.tableArn],
  });
}

/**
 * What Lambda needs to attach a function to a VPC (exactly AWSLambdaVPCAccessExecutionRole's
 * EC2 actions, written out so the role keeps no managed policy). EC2 offers no resource-level
 * scope for the Describe actions and Lambda names the ENIs, hence `*`.
 */
export const VPC_NETWORK_INTERFACE_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
] as const;

/**
 * Lambda manages the function's ENIs with its role from outside the execution environment, and
 * those calls carry no `lambda:SourceFunctionArn`; calls made by the function's own code do. The
 * Deny therefore keeps the ENI actions away from the code while Lambda keeps them.
 */
export function grantVpcNetworking(role: IRole): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'VpcNetworkInterfaces',
      actions: [...VPC_NETWORK_INTERFACE_ACTIONS],
      resources: ['*'],
    }),
  );
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'NoNetworkInterfacesFromFunctionCode',
      effect: Effect.DENY,
      actions: [...VPC_NETWORK_INTERFACE_ACTIONS],
      resources: ['*'],
      conditions: { Null: { 'lambda:SourceFunctionArn': 'false' } },
    }),
  );
}

/**
 * GetSecretValue on this one secret (by its complete ARN), and Decrypt through Secrets Manager
 * when a customer managed key encrypts it. No DescribeSecret, no other secret.
 */
export function grantUpstreamSecret(role: IRole, secret: ISecret): void {
  grantSecret(role, secret, 'UpstreamSecret');
}

/** GetSecretValue on one secret by its complete ARN, and Decrypt through Secrets Manager. */
function grantSecret(role: IRole, secret: ISecret, sid: string): void {
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid,
      actions: ['secretsmanager:GetSecretValue'],
      resources: [secret.secretFullArn ?? secret.secretArn],
    }),
  );
  const region = Stack.of(secret).region;
  secret.encryptionKey?.grantDecrypt(
    new ViaServicePrincipal(`secretsmanager.${region}.amazonaws.com`, role),
  );
}

/**
 * CloudFront purges by cache tag with CreateInvalidation alone: the adapter never reads an
 * invalidation back (its id is logged), so no GetInvalidation or ListInvalidations.
 */
export const CDN_PURGE_ACTIONS = ['cloudfront:CreateInvalidation'] as const;

/**
 * Lets `grantee` purge this distribution's cache by tag, and no other distribution's (the
 * statement names this distribution's ARN; CloudFront has no wider resource to fall back on).
 */
export function grantCdnInvalidation(grantee: IGrantable, distribution: IDistribution): Grant {
  return Grant.addToPrincipal({
    grantee,
    actions: [...CDN_PURGE_ACTIONS],
    resourceArns: [distribution.distributionArn],
  });
}
