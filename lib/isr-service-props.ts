/**
 * Props of `IsrService`, in a file of their own so every `lib/` module can read them without
 * importing the construct (no import cycles). Defaults of what the Lambdas read come from
 * `lambda/core/settings.ts`.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { GeoRestriction } from 'aws-cdk-lib/aws-cloudfront';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { ILogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';

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

/** Everything the pages, the functions, the edge and the alarms can be told. */
export interface IsrServiceProps {
  /**
   * Upstream SSR origin pages are rendered from (`RENDER_ORIGIN_URL`). https only; plain http
   * is refused except for loopback hosts (localhost, 127.0.0.0/8, ::1).
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
   * Tenants served in multi-tenant mode (`ISR_TENANTS`); needs `tenantHeader`. Each is a name
   * the cache key accepts (1-64 of `A-Za-z0-9._-`, starting alphanumeric).
   * @default - any well-formed tenant
   */
  readonly tenants?: readonly string[];
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
   * Regeneration lease; must be longer than `renderTimeoutMs` and `clockSkewMarginSeconds`.
   * @default 30
   */
  readonly leaseSeconds?: number;
  /**
   * Largest clock difference assumed between two functions: a render starts only while the lease
   * has more than this left, so nobody else can have taken it over yet. Below `leaseSeconds`.
   * @default 2
   */
  readonly clockSkewMarginSeconds?: number;
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
   * Path patterns that may be rendered at all (`/blog/*` within a segment, `/docs/**` across);
   * any other path is a 404 that costs no read, render or row. Turn it on when the site's paths
   * are known, so a crawler looping over random URLs cannot fill the cache.
   * @default [] - every path may be rendered
   */
  readonly renderPaths?: readonly string[];
  /**
   * Upstream response headers kept with a page and replayed to viewers (exact names, or a
   * prefix ending in `*`). Hop-by-hop headers and those the service sets are never kept.
   * @default CSP (and -report-only), HSTS, X-Frame-Options, X-Content-Type-Options,
   * Referrer-Policy, Permissions-Policy, Cross-Origin-*, Link, Content-Language, X-Robots-Tag
   */
  readonly keptHeaders?: readonly string[];
  /**
   * A page that sets a cookie: `strip` caches it without the cookie (logged), as CloudFront
   * does when cookies are not in the cache key; `refuse` does not cache it at all (502).
   * @default 'strip'
   */
  readonly setCookie?: 'strip' | 'refuse';
  /**
   * Key prefix of page bodies in the bucket; both functions' object permissions and the
   * lifecycle rule are scoped to it. Set it to the prefix another writer (FaceTheory) uses to
   * share its bodies.
   * @default 'pages/'
   */
  readonly bodyKeyPrefix?: string;
  /**
   * The response header the origin lists a page's cache tags in; CloudFront's CacheTagConfig
   * reads it (a purge by tag uses it) and a response headers policy removes it for viewers.
   * @default 'x-isr-cache-tags'
   */
  readonly cacheTagHeader?: string;
  /**
   * The upstream response header a page's tags come from, comma-separated.
   * @default 'cache-tag'
   */
  readonly upstreamTagHeader?: string;
  /**
   * How long a page nobody asks for is kept after it goes stale, before DynamoDB TTL may
   * collect its rows (the sweeper then retires its body). A requested page is regenerated,
   * which moves this forward.
   * @default 604_800 (7 days)
   */
  readonly metaTtlSeconds?: number;
  /**
   * The same for a 404 or 410 page, kept briefly so random paths do not fill the table.
   * @default 3_600
   */
  readonly goneTtlSeconds?: number;
  /**
   * Versions of each page kept for `isr rollback` (VER# rows and their bodies), the live one
   * included; older ones are deleted as new ones are published. Each publish writes one more row
   * in its transaction. 2..20.
   * @default 5
   */
  readonly keepVersions?: number;
  /**
   * The sweeper retires a body nothing points to only once it is older than this: more than the
   * lease plus the longest function timeout (900 s), so the render that wrote it cannot still
   * publish it.
   * @default 3_600 (1 hour)
   */
  readonly orphanAgeSeconds?: number;
  /**
   * Renders inside viewer requests (MISSes) at once, across every origin instance; past it a
   * viewer gets 503 + Retry-After (or `overloadFallbackPath`) at once. `0` turns the cap off.
   * Keep it below `originReservedConcurrency`, so HITs are still served during a flood.
   * @default 25
   */
  readonly missRenderLimit?: number;
  /**
   * A cached page served, as a 503 nobody caches, when the MISS cap is reached (e.g. `/busy`).
   * @default - a plain 503 with Retry-After
   */
  readonly overloadFallbackPath?: string;
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
   * Concurrency reserved for the worker, so a flood of origin traffic can never take the slots
   * regenerations need; at least `workerMaxConcurrency`. `0` reserves nothing (use it where the
   * account's limit is low: Lambda keeps 10 unreserved, so a new 10-slot account cannot reserve).
   * @default - `workerMaxConcurrency`, exactly what its event source can use
   */
  readonly workerReservedConcurrency?: number;
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
   * Concurrency reserved for (and capping) the origin: bounds its share of the account and the
   * render load a flood of misses puts on the upstream; throttles raise an alarm. `0` reserves
   * nothing and leaves the origin uncapped (for accounts whose limit is too low to reserve).
   * @default 100
   */
  readonly originReservedConcurrency?: number;
  /**
   * Receives before SQS moves a message to the DLQ (at least 5); the worker is told the same.
   * @default 5
   */
  readonly maxReceiveCount?: number;
  /**
   * Days a retired body (a version no longer kept, or an orphan) is kept after it was deleted,
   * as a noncurrent version of the versioned bucket, before the lifecycle rule expires it.
   * Counted from the delete, not from the body's creation.
   * @default 7
   */
  readonly supersededBodyExpirationDays?: number;
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
   * What happens to the cache table, body bucket and log groups the service created when they
   * leave the stack. A non-empty bucket is never emptied for you (no auto-delete custom resource).
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Retention of both functions' log groups.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
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
   * Secret sent to the upstream in `upstreamSecretHeader`, so it can refuse anyone else. Only
   * its ARN reaches the functions (`ISR_UPSTREAM_SECRET_ARN`); they may read this secret only.
   * Needs a complete ARN (a Secret of this app, or `Secret.fromSecretCompleteArn`).
   * @default - no secret header
   */
  readonly upstreamSecret?: ISecret;
  /**
   * Header the upstream secret is sent in.
   * @default 'x-isr-origin-secret'
   */
  readonly upstreamSecretHeader?: string;
  /**
   * HMAC key for webhook senders that cannot sign SigV4 (CMS webhooks). Set, the revalidate
   * function URL takes no IAM auth (`NONE`) and every request must carry a valid
   * `x-isr-signature` over `x-isr-timestamp` and the raw body; the function may read this secret
   * only, through the Parameters and Secrets extension. Needs a complete ARN.
   * @default - the revalidate URL requires SigV4 (`AWS_IAM`); see `grantRevalidate`
   */
  readonly revalidateWebhookSecret?: ISecret;
  /**
   * Alarm when the oldest queued intent is older than this (at least 60 s).
   * @default Duration.seconds(300)
   */
  readonly queueAgeAlarmThreshold?: Duration;
  /**
   * Alarm when more than this many new messages reach the DLQ in 5 minutes.
   * @default 0
   */
  readonly deadLetterAlarmThreshold?: number;
  /**
   * Alarm when the worker fails more often than this in 5 minutes.
   * @default 0
   */
  readonly workerErrorsAlarmThreshold?: number;
  /**
   * Alarm when the origin function fails (crash, timeout) more often than this in 5 minutes.
   * @default 0
   */
  readonly originErrorsAlarmThreshold?: number;
  /**
   * Alarm when more than this percentage of page requests are misses, for 15 minutes.
   * @default 50
   */
  readonly missRateAlarmThresholdPercent?: number;
  /**
   * Alarm when more than this percentage of page requests fail (5xx from the origin), for 10 minutes.
   * @default 5
   */
  readonly renderFailureRateAlarmThresholdPercent?: number;
  /**
   * Alarm when CloudFront answers more than this percentage of requests with 5xx, for 10 minutes.
   * @default 5
   */
  readonly cdnErrorRateAlarmThresholdPercent?: number;
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
   * Requests one client IP may make in 5 minutes before WAF blocks it: creates a web ACL with
   * one rate-based rule. CloudFront web ACLs live in us-east-1, so the stack must be there.
   * @default - no web ACL (WAF bills per web ACL, rule and request)
   */
  readonly rateLimitPerFiveMinutes?: number;
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
