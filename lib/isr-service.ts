/**
 * The whole ISR service as one construct: cache table, body bucket, regeneration queue + DLQ,
 * origin and worker functions, CloudFront in front of the origin's function URL, and alarms.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type {
  CachePolicy,
  Distribution,
  GeoRestriction,
  OriginRequestPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, Billing, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, Role, ServicePrincipal, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { FunctionUrlAuthType, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  ObjectOwnership,
  type IBucket,
} from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import {
  DeduplicationScope,
  FifoThroughputLimit,
  Queue,
  QueueEncryption,
} from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SupersededTag } from '../lambda/adapters/s3/body-store.js';
import { BODY_KEY_PREFIX } from '../lambda/core/rows.js';
import { alarmsOf, createIsrAlarms, type IsrAlarms } from './isr-alarms.js';
import {
  createPageCachePolicy,
  createPageDistribution,
  createPageOriginRequestPolicy,
} from './isr-cdn.js';
import { createServiceFunction } from './isr-functions.js';
import { acknowledgeNagFindings } from './isr-nag.js';
import { grantOriginAccess, grantWorkerAccess } from './isr-permissions.js';
import { resolveSettings, VISIBILITY_TIMEOUT_FACTOR, type IsrSettings } from './isr-settings.js';

export interface IsrServiceProps {
  /**
   * Upstream SSR origin pages are rendered from (`RENDER_ORIGIN_URL`), http or https.
   * @default - the built-in demo renderer
   */
  readonly renderOriginUrl?: string;
  /**
   * Query parameters that are part of the cache key. CloudFront caches on and forwards only
   * these; every other parameter is dropped at the edge.
   * @default [] - no query string reaches the origin
   */
  readonly allowedQueryParams?: readonly string[];
  /**
   * Request header that names the tenant. Setting it turns on multi-tenant mode: the header is
   * part of the cache key and a request without it is refused.
   * @default - single-tenant
   */
  readonly tenantHeader?: string;
  /**
   * Bump when rendering changes, so intents of the old deploy never dedupe new ones.
   * @default 'unversioned'
   */
  readonly deployId?: string;
  /**
   * Freshness of a page that does not ask for its own.
   * @default 60
   */
  readonly revalidateSeconds?: number;
  /**
   * Regeneration lease; must be longer than `renderTimeoutMs`.
   * @default 30
   */
  readonly leaseSeconds?: number;
  /**
   * Longest render; below the lease, and leaving room in both function timeouts.
   * @default 10_000
   */
  readonly renderTimeoutMs?: number;
  /**
   * Largest body published; at most 4 MiB, so a base64 body fits a function URL response.
   * @default 4 MiB
   */
  readonly maxBodyBytes?: number;
  /**
   * Worker timeout; the queue's visibility timeout is six times this.
   * @default Duration.seconds(30)
   */
  readonly workerTimeout?: Duration;
  /**
   * Worker memory in MB (CPU scales with it).
   * @default 1024
   */
  readonly workerMemorySize?: number;
  /**
   * Records per worker invocation (FIFO: at most 10); they are processed concurrently.
   * @default 10
   */
  readonly workerBatchSize?: number;
  /**
   * Concurrent worker invocations the event source may run (2 to 1000).
   * @default 10
   */
  readonly workerMaxConcurrency?: number;
  /**
   * Origin timeout; a miss renders in the request, so it must fit a render and its publish.
   * CloudFront waits as long, up to its default 60 s origin response quota.
   * @default Duration.seconds(30)
   */
  readonly originTimeout?: Duration;
  /**
   * Origin memory in MB (CPU scales with it).
   * @default 1024
   */
  readonly originMemorySize?: number;
  /**
   * Receives before SQS moves a message to the DLQ (at least 5); the worker is told the same.
   * @default 5
   */
  readonly maxReceiveCount?: number;
  /**
   * Days a superseded or orphaned body is kept before the lifecycle rule expires it.
   * @default 7
   */
  readonly supersededBodyExpirationDays?: number;
  /**
   * What happens to the cache table, body bucket and log groups when they leave the stack. A
   * non-empty bucket is never emptied for you (no auto-delete custom resource).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Retention of both functions' log groups.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Alarm when the oldest queued intent is older than this (at least 60 s).
   * @default Duration.seconds(300)
   */
  readonly queueAgeAlarmThreshold?: Duration;
  /**
   * Alarm when more messages than this are visible in the DLQ.
   * @default 0
   */
  readonly deadLetterAlarmThreshold?: number;
  /**
   * Alarm when the worker fails more often than this in 5 minutes.
   * @default 0
   */
  readonly workerErrorsAlarmThreshold?: number;
  /**
   * Topic every alarm notifies.
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
   * AWS WAF web ACL (ARN) in front of the distribution.
   * @default - no WAF
   */
  readonly webAclId?: string;
  /**
   * Countries served or refused.
   * @default - served everywhere
   */
  readonly geoRestriction?: GeoRestriction;
  /**
   * Bucket for CloudFront standard logs (`cloudfront/`) and the body bucket's S3 server access
   * logs (`s3-bodies/`); CloudFront needs it to accept ACL writes (ObjectWriter ownership).
   * @default - no access logs
   */
  readonly accessLogsBucket?: IBucket;
}

/**
 * Incremental static regeneration behind CloudFront. Who may do what (details in
 * `isr-permissions.ts`): both functions run the lease + publish protocol on the cache table
 * (Get/Put/Update/DeleteItem, table ARN only). The origin renders misses, so it takes and releases
 * its own LOCK row: it can delete a LOCK only because of that, and only ever its own, conditioned
 * on its token. It reads, writes and tags bodies but cannot delete one, and may only send to the
 * regeneration queue. The worker writes, tags and deletes (orphan) bodies, consumes the queue and
 * sends poison messages to the DLQ. CloudFront alone may invoke the origin (OAC, SigV4).
 */
export class IsrService extends Construct {
  readonly table: TableV2;
  readonly bucket: Bucket;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly originFunction: NodejsFunction;
  readonly workerFunction: NodejsFunction;
  readonly functionUrl: FunctionUrl;
  readonly distribution: Distribution;
  readonly cachePolicy: CachePolicy;
  readonly originRequestPolicy: OriginRequestPolicy;
  readonly alarms: IsrAlarms;
  /** Execution role of the origin function. */
  readonly originRole: Role;
  /** Execution role of the worker function. */
  readonly workerRole: Role;
  /** Props with defaults applied, as the functions see them. */
  readonly settings: IsrSettings;

  constructor(scope: Construct, id: string, props: IsrServiceProps = {}) {
    super(scope, id);
    const settings = resolveSettings(props);
    this.settings = settings;
    // An own role per function instead of AWSLambdaBasicExecutionRole: it logs only to its group.
    this.originRole = new Role(this, 'OriginRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'ISR origin function',
    });
    this.workerRole = new Role(this, 'WorkerRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'ISR worker function',
    });

    // TableV2 (AWS::DynamoDB::GlobalTable) is the current table API: replicas can be added later
    // without replacing the table, which a move from Table to TableV2 would require.
    this.table = new TableV2(this, 'CacheTable', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: 'ttl',
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: settings.removalPolicy !== RemovalPolicy.DESTROY,
      removalPolicy: settings.removalPolicy,
    });

    this.bucket = new Bucket(this, 'Bodies', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      removalPolicy: settings.removalPolicy,
      serverAccessLogsBucket: props.accessLogsBucket,
      serverAccessLogsPrefix: props.accessLogsBucket ? 's3-bodies/' : undefined,
      lifecycleRules: [
        // Never removes a body META points to. Bodies are immutable: every render writes a new
        // key. The tag is set only on a body after META moved to a newer generation, or on an
        // orphan no META ever referenced, and META never goes back to an older generation, so a
        // tagged body is never referenced again. The delay covers reads still in flight.
        {
          id: 'ExpireSupersededBodies',
          prefix: BODY_KEY_PREFIX,
          tagFilters: { [SupersededTag.Key]: SupersededTag.Value },
          expiration: Duration.days(settings.supersededBodyExpirationDays),
        },
        { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'RegenerationQueue', {
      fifo: true,
      // The origin sets a deduplication ID per intent; a key always maps to the same group, so
      // per-group dedupe and throughput (high-throughput FIFO) lose nothing.
      contentBasedDeduplication: false,
      deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(4),
      visibilityTimeout: Duration.seconds(
        settings.workerTimeout.toSeconds() * VISIBILITY_TIMEOUT_FACTOR,
      ),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: settings.maxReceiveCount },
    });

    const resources = {
      table: this.table,
      bucket: this.bucket,
      queue: this.queue,
      deadLetterQueue: this.deadLetterQueue,
    };
    const storage = { tableName: this.table.tableName, bucketName: this.bucket.bucketName };
    this.originFunction = createServiceFunction(this, 'origin', {
      ...storage,
      role: this.originRole,
      settings,
      timeout: settings.originTimeout,
      memorySize: settings.originMemorySize,
      environment: { ISR_QUEUE_URL: this.queue.queueUrl },
    });
    grantOriginAccess(this.originRole, resources);

    this.workerFunction = createServiceFunction(this, 'worker', {
      ...storage,
      role: this.workerRole,
      settings,
      timeout: settings.workerTimeout,
      memorySize: settings.workerMemorySize,
      environment: {
        ISR_DLQ_URL: this.deadLetterQueue.queueUrl,
        ISR_MAX_RECEIVE_COUNT: String(settings.maxReceiveCount),
      },
    });
    grantWorkerAccess(this.workerRole, resources);
    this.workerFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: settings.workerBatchSize,
        maxConcurrency: settings.workerMaxConcurrency,
        reportBatchItemFailures: true,
      }),
    );

    this.functionUrl = this.originFunction.addFunctionUrl({
      authType: FunctionUrlAuthType.AWS_IAM,
    });
    this.cachePolicy = createPageCachePolicy(this, 'PageCachePolicy', settings);
    this.originRequestPolicy = createPageOriginRequestPolicy(
      this,
      'PageOriginRequestPolicy',
      settings,
    );
    this.distribution = createPageDistribution(this, 'Distribution', {
      functionUrl: this.functionUrl,
      cachePolicy: this.cachePolicy,
      originRequestPolicy: this.originRequestPolicy,
      originTimeout: settings.originTimeout,
      domainNames: props.domainNames,
      certificate: props.certificate,
      webAclId: props.webAclId,
      geoRestriction: props.geoRestriction,
      accessLogsBucket: props.accessLogsBucket,
    });

    this.alarms = createIsrAlarms(this, {
      queue: this.queue,
      deadLetterQueue: this.deadLetterQueue,
      worker: this.workerFunction,
      queueAgeThreshold: settings.queueAgeAlarmThreshold,
      deadLetterThreshold: settings.deadLetterAlarmThreshold,
      workerErrorsThreshold: settings.workerErrorsAlarmThreshold,
      actions: props.alarmTopic ? [new SnsAction(props.alarmTopic)] : [],
    });
    acknowledgeNagFindings(this, props);
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

  /** Sends every alarm of the service to these actions (pager, chat, ticket). */
  addAlarmAction(...actions: IAlarmAction[]): void {
    for (const alarm of alarmsOf(this.alarms)) alarm.addAlarmAction(...actions);
  }
}
