/**
 * The whole ISR service as one construct: cache table, body bucket, regeneration queue + DLQ,
 * purge queue + DLQ, origin, worker, revalidate, sweeper and purger functions, CloudFront in
 * front of the origin's function URL, and alarms.
 * Each part is built by a small function in its own file; the constructor only composes them.
 */
import type {
  CachePolicy,
  Distribution,
  IOrigin,
  OriginRequestPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { Dashboard, IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable, type Role } from 'aws-cdk-lib/aws-iam';
import {
  FunctionUrlAuthType,
  InvokeMode,
  type Function as LambdaFunction,
  type FunctionUrl,
} from 'aws-cdk-lib/aws-lambda';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Function as CloudFrontFunction } from 'aws-cdk-lib/aws-cloudfront';
import { Annotations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { alarmsOf, createIsrAlarms, type IsrAlarms } from './isr-alarms.js';
import type { CdnLogDelivery } from './isr-cdn-logs.js';
import { createIsrDashboard } from './isr-dashboard.js';
import { wireCdnPurge } from './isr-cdn.js';
import { createPageEdge } from './isr-edge.js';
import { createServiceFunction } from './isr-functions.js';
import { acknowledgeNagFindings } from './isr-nag.js';
import {
  createFunctionRole,
  grantOriginAccess,
  grantPurgerAccess,
  grantSweeperAccess,
  grantRevalidateAccess,
  grantWorkerAccess,
} from './isr-permissions.js';
import {
  consumePurgeQueue,
  consumeRegenerationQueue,
  createPurgeQueues,
  createRegenerationQueues,
} from './isr-queues.js';
import { quotaLine, quotaOf } from './isr-quota.js';
import type { IsrServiceProps } from './isr-service-props.js';
import { PURGER_TIMEOUT, resolveSettings, type IsrSettings } from './isr-settings.js';
import { bodyBucketOf, cacheTableOf, grantStorageKeys } from './isr-storage.js';
import { scheduleSweeper } from './isr-sweeper.js';
import { scheduleDeferredIntents } from './isr-budget.js';
import type { Rule } from 'aws-cdk-lib/aws-events';

export type { CdnLogsDestination, IsrServiceProps } from './isr-service-props.js';

/**
 * Incremental static regeneration behind CloudFront. Who may do what (details in
 * `isr-permissions.ts`): the origin and the worker run the lease + publish protocol on the cache
 * table (Get/Put/Update/DeleteItem, table ARN only). The origin renders misses, so it takes and
 * releases its own LOCK row: it can delete a LOCK only because of that, and only ever its own,
 * conditioned on its token. It reads and writes bodies but cannot delete one, and may only send
 * to the regeneration queue. The worker writes and deletes (orphan) bodies, consumes the queue
 * and sends poison messages to the DLQ. The revalidate function marks pages' rows, queues
 * regenerations and purges the CDN by cache tag; it has no bucket access. The sweeper (every 5
 * minutes) reads the status index and a page's rows, writes its cursor row, deletes the VER#
 * rows META no longer lists and the pending purges CloudFront accepted (recording the attempts
 * of the others), lists and retires orphan bodies. The purger takes soft and deadline purges
 * off the purge queue (the worker and the revalidate function send them) and makes the
 * invalidations: with the revalidate function and the sweeper, the only functions that may
 * purge the distribution. No function tags bodies. CloudFront alone may invoke the origin (OAC,
 * SigV4).
 */
export class IsrService extends Construct {
  /** The cache table: `props.table`, or the one the service created. */
  readonly table: ITable;
  /** The body bucket: `props.bucket`, or the one the service created. */
  readonly bucket: IBucket;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  /** Where CDN purges wait for the purger: soft purges, and deadlines (delayed). */
  readonly purgeQueue: Queue;
  readonly purgeDeadLetterQueue: Queue;
  readonly originFunction: LambdaFunction;
  readonly workerFunction: LambdaFunction;
  /** Reports stuck and failed work and retires orphan bodies, every 5 minutes. */
  readonly sweeperFunction: LambdaFunction;
  readonly sweeperSchedule: Rule;
  /** The sweeper's minute run over deferred intents; only with `regenerationBudget` set. */
  readonly deferredIntentsSchedule: Rule | undefined;
  /** Requests, hit ratio, regeneration, queue, DLQ, stuck and failed work. */
  readonly dashboard: Dashboard;
  readonly functionUrl: FunctionUrl;
  /** On-demand revalidation by path and tag (`POST` JSON, Idempotency-Key). */
  readonly revalidateFunction: LambdaFunction;
  /** Its own URL: AWS_IAM (see `grantRevalidate`), or NONE with an HMAC webhook key. */
  readonly revalidateUrl: FunctionUrl;
  /** Execution role of the revalidate function. */
  readonly revalidateRole: Role;
  /** The service's own distribution, or `props.distribution` with the pages on `pathPattern`. */
  readonly distribution: Distribution;
  readonly cachePolicy: CachePolicy;
  readonly originRequestPolicy: OriginRequestPolicy;
  /** The rate-limiting web ACL, when `rateLimitPerFiveMinutes` is set. */
  readonly webAcl: CfnWebACL | undefined;
  /** CloudFront standard logging v2, when `cdnLogs` is set. */
  readonly cdnLogDelivery: CdnLogDelivery | undefined;
  /**
   * The viewer-request CloudFront Function: the tenant from `Host` (`tenantsByHost`) and the
   * routing to the upstream; undefined when there is neither.
   */
  readonly viewerRequestFunction: CloudFrontFunction | undefined;
  /**
   * The upstream as a CloudFront origin (id `isr-upstream`), where the edge routes static
   * assets, bypass paths and everything that is not a cached page; undefined without an https
   * upstream (the demo renderer).
   */
  readonly upstreamOrigin: IOrigin | undefined;
  readonly alarms: IsrAlarms;
  /** Execution role of the origin function. */
  readonly originRole: Role;
  /** Execution role of the worker function. */
  readonly workerRole: Role;
  /** Execution role of the sweeper function. */
  readonly sweeperRole: Role;
  /** Purges the CDN off the purge queue, in batches (soft purges, deadlines). */
  readonly purgerFunction: LambdaFunction;
  /** Execution role of the purger function. */
  readonly purgerRole: Role;
  /** Props with defaults applied, as the functions see them. */
  readonly settings: IsrSettings;

  constructor(scope: Construct, id: string, props: IsrServiceProps = {}) {
    super(scope, id);
    const settings = resolveSettings(props);
    this.settings = settings;
    // What the account must set aside, printed by every synth (issue 31, fix 7).
    Annotations.of(this).addInfo(quotaLine(quotaOf(settings)));
    this.originRole = createFunctionRole(this, 'origin', props);
    this.workerRole = createFunctionRole(this, 'worker', props);
    // The sweeper reaches AWS APIs only: no VPC, no upstream secret.
    this.sweeperRole = createFunctionRole(this, 'sweeper', {});
    this.revalidateRole = createFunctionRole(this, 'revalidate', props);
    // The purger reaches AWS APIs only: no VPC, no upstream secret.
    this.purgerRole = createFunctionRole(this, 'purger', {});

    const storage = {
      ...settings,
      accessLogsBucket: props.accessLogsBucket,
      table: props.table,
      bucket: props.bucket,
    };
    this.table = cacheTableOf(this, storage);
    this.bucket = bodyBucketOf(this, storage);
    grantStorageKeys(this.table, this.bucket, {
      table: [
        this.originRole,
        this.workerRole,
        this.sweeperRole,
        this.revalidateRole,
        this.purgerRole,
      ],
      readWrite: [this.originRole],
      writeOnly: [this.workerRole],
    });
    const queues = createRegenerationQueues(this, settings);
    this.queue = queues.queue;
    this.deadLetterQueue = queues.deadLetterQueue;
    const purges = createPurgeQueues(this, { ...settings, purgerTimeout: PURGER_TIMEOUT });
    this.purgeQueue = purges.purgeQueue;
    this.purgeDeadLetterQueue = purges.purgeDeadLetterQueue;

    const resources = {
      table: this.table,
      bucket: this.bucket,
      ...queues,
      ...purges,
      bodyKeyPrefix: settings.bodyKeyPrefix,
    };
    grantOriginAccess(this.originRole, resources);
    grantWorkerAccess(this.workerRole, resources);
    grantSweeperAccess(this.sweeperRole, resources);
    grantRevalidateAccess(this.revalidateRole, resources);
    grantPurgerAccess(this.purgerRole, resources);
    const refs = {
      tableName: this.table.tableName,
      bucketName: this.bucket.bucketName,
      queueUrl: this.queue.queueUrl,
      deadLetterQueueUrl: this.deadLetterQueue.queueUrl,
      purgeQueueUrl: this.purgeQueue.queueUrl,
      purgeDeadLetterQueueUrl: this.purgeDeadLetterQueue.queueUrl,
    };
    const functions = { settings, refs, network: props };
    this.originFunction = createServiceFunction(this, 'origin', {
      ...functions,
      role: this.originRole,
    });
    this.workerFunction = createServiceFunction(this, 'worker', {
      ...functions,
      role: this.workerRole,
    });
    consumeRegenerationQueue(this.workerFunction, this.queue, settings);
    this.sweeperFunction = createServiceFunction(this, 'sweeper', {
      ...functions,
      network: {},
      role: this.sweeperRole,
    });
    this.sweeperSchedule = scheduleSweeper(this, this.sweeperFunction);
    this.deferredIntentsSchedule = scheduleDeferredIntents(
      this,
      this.sweeperFunction,
      settings.regenerationBudget,
    );
    this.purgerFunction = createServiceFunction(this, 'purger', {
      ...functions,
      network: {},
      role: this.purgerRole,
    });
    consumePurgeQueue(this.purgerFunction, this.purgeQueue, settings);
    // Not in the VPC: it reaches DynamoDB and SQS only.
    this.revalidateFunction = createServiceFunction(this, 'revalidate', {
      ...functions,
      network: {},
      role: this.revalidateRole,
    });
    // With a webhook key the handler itself refuses every request without a valid signature.
    this.revalidateUrl = this.revalidateFunction.addFunctionUrl({
      authType:
        props.revalidateWebhookSecret === undefined
          ? FunctionUrlAuthType.AWS_IAM
          : FunctionUrlAuthType.NONE,
    });

    // RESPONSE_STREAM: a pass reaches the viewer as the upstream sends it (Suspense fallbacks
    // first); cached pages are written whole on the same stream. CloudFront takes a streaming
    // function URL as its origin with OAC as before:
    // https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html
    this.functionUrl = this.originFunction.addFunctionUrl({
      authType: FunctionUrlAuthType.AWS_IAM,
      invokeMode: InvokeMode.RESPONSE_STREAM,
    });
    const edge = createPageEdge(this, this.functionUrl, settings, props);
    this.cachePolicy = edge.cachePolicy;
    this.originRequestPolicy = edge.originRequestPolicy;
    this.webAcl = edge.webAcl;
    this.distribution = edge.distribution;
    this.cdnLogDelivery = edge.cdnLogDelivery;
    this.viewerRequestFunction = edge.viewerRequestFunction;
    this.upstreamOrigin = edge.upstreamOrigin;
    // A revalidation purges its pages by cache tag (at once without `regenerate`); the purger
    // makes the soft and deadline purges; the sweeper submits again the purges CloudFront
    // refused while throttled. No other function may invalidate: the worker only queues them.
    wireCdnPurge(this.revalidateFunction, this.distribution);
    wireCdnPurge(this.sweeperFunction, this.distribution);
    wireCdnPurge(this.purgerFunction, this.distribution);

    this.alarms = createIsrAlarms(this, {
      ...queues,
      ...purges,
      origin: this.originFunction,
      worker: this.workerFunction,
      sweeper: this.sweeperFunction,
      distribution: this.distribution,
      settings,
      routesToUpstream: edge.upstreamOrigin !== undefined,
      actions: props.alarmTopic ? [new SnsAction(props.alarmTopic)] : [],
    });
    this.dashboard = createIsrDashboard(this, {
      ...queues,
      ...purges,
      distribution: this.distribution,
    });
    const functionsAndRoles = [
      { fn: this.originFunction, role: this.originRole },
      { fn: this.workerFunction, role: this.workerRole },
      { fn: this.sweeperFunction, role: this.sweeperRole },
      { fn: this.revalidateFunction, role: this.revalidateRole, bodies: false },
      { fn: this.purgerFunction, role: this.purgerRole, bodies: false },
    ];
    acknowledgeNagFindings(
      {
        bucket: this.bucket,
        ownBucket: props.bucket === undefined,
        distribution: props.distribution === undefined ? this.distribution : undefined,
        functions: functionsAndRoles,
        bodyKeyPrefix: settings.bodyKeyPrefix,
      },
      props,
    );
  }

  /**
   * Lets another principal (a CMS webhook, a deploy job) queue regeneration intents: SendMessage
   * on the regeneration queue, like the origin, and nothing else.
   */
  grantEnqueueRegeneration(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['sqs:SendMessage'],
      resourceArns: [this.queue.queueArn],
    });
  }

  /**
   * Lets a principal (a CMS's role, a deploy job) call the revalidate URL with SigV4: what AWS
   * requires of a function URL's caller since October 2025 ("Control access to Lambda function
   * URLs", https://docs.aws.amazon.com/lambda/latest/dg/urls-auth.html), on this function only:
   * lambda:InvokeFunctionUrl (through IAM auth) and lambda:InvokeFunction (only via the URL), as
   * CDK's grantInvokeUrl gives them. Useless in HMAC mode, where the URL takes no IAM auth and
   * the signature decides.
   */
  grantRevalidate(grantee: IGrantable): Grant {
    return this.revalidateFunction.grantInvokeUrl(grantee);
  }

  /** Sends every alarm of the service to these actions when it fires (pager, chat, ticket). */
  addAlarmAction(...actions: IAlarmAction[]): void {
    for (const alarm of alarmsOf(this.alarms)) alarm.addAlarmAction(...actions);
  }

  /** Sends every alarm of the service to these actions when it is OK again. */
  addOkAction(...actions: IAlarmAction[]): void {
    for (const alarm of alarmsOf(this.alarms)) alarm.addOkAction(...actions);
  }
}
