/**
 * Where pages live: the cache table (META, LOCK and REQ# rows in the FaceTheory schema) and the
 * body bucket (one immutable object per generation). Both are created and retained by default,
 * or brought by the user (`table`, `bucket`), checked where synth can see them.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  ProjectionType,
  TableV2,
  type ITable,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  ObjectOwnership,
  type IBucket,
  type LifecycleRule,
} from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { StatusIndex, SupersededTag } from '../lambda/core/page/rows.js';
import { checkBodyBucket, checkCacheTable } from './isr-storage-checks.js';

export interface StorageOptions {
  readonly removalPolicy: RemovalPolicy;
  readonly supersededBodyExpirationDays: number;
  readonly bodyKeyPrefix: string;
  /** @default - no server access logs */
  readonly accessLogsBucket?: IBucket | undefined;
  /** The user's table. @default - a new one */
  readonly table?: ITable | undefined;
  /** The user's bucket. @default - a new one */
  readonly bucket?: IBucket | undefined;
}

/** The user's table, checked at synth where it can be, else a new one. */
export function cacheTableOf(scope: Construct, options: StorageOptions): ITable {
  if (options.table === undefined) return createCacheTable(scope, options);
  checkCacheTable(scope, options.table);
  return options.table;
}

/**
 * The user's bucket, checked at synth where it can be, else a new one. A bucket of this app
 * also gets the rule expiring retired bodies, scoped to the body prefix; an imported one
 * cannot be changed, so docs/DEPLOY.md says what it needs.
 */
export function bodyBucketOf(scope: Construct, options: StorageOptions): IBucket {
  const bucket = options.bucket;
  if (bucket === undefined) return createBodyBucket(scope, options);
  checkBodyBucket(scope, bucket);
  if (bucket instanceof Bucket) {
    for (const rule of bodyLifecycleRules(options)) {
      bucket.addLifecycleRule({ ...rule, id: `Isr${rule.id ?? ''}` });
    }
  }
  return bucket;
}

/** Only the rules for bodies under the prefix: on a shared bucket, nothing else is touched. */
const bodyLifecycleRules = (options: StorageOptions): LifecycleRule[] => [
  {
    id: 'ExpireRetiredBodies',
    prefix: options.bodyKeyPrefix,
    noncurrentVersionExpiration: Duration.days(options.supersededBodyExpirationDays),
  },
  {
    id: 'AbortIncompleteBodyUploads',
    prefix: options.bodyKeyPrefix,
    abortIncompleteMultipartUploadAfter: Duration.days(1),
  },
];

/** Each role of the service, by what it does to bodies. */
export interface StorageRoles {
  /** Read and write bodies (origin). */
  readonly readWrite: readonly IRole[];
  /** Write bodies only (worker). */
  readonly writeOnly: readonly IRole[];
  /** Use the table (all four). */
  readonly table: readonly IRole[];
}

/**
 * A table or bucket encrypted with a customer managed key needs the key too: encrypt and
 * decrypt for every role using the table; for bodies, the origin reads and writes, the worker
 * writes (PutObject needs GenerateDataKey), the sweeper only deletes (no key needed).
 */
export function grantStorageKeys(table: ITable, bucket: IBucket, roles: StorageRoles): void {
  const keyed = new Set<IRole>();
  const grant = (role: IRole, key: IKey | undefined, how: (key: IKey, role: IRole) => void) => {
    if (key === undefined) return;
    how(key, role);
    keyed.add(role);
  };
  for (const role of roles.table)
    grant(role, table.encryptionKey, (k, r) => k.grantEncryptDecrypt(r));
  for (const role of roles.readWrite)
    grant(role, bucket.encryptionKey, (k, r) => k.grantEncryptDecrypt(r));
  for (const role of roles.writeOnly)
    grant(role, bucket.encryptionKey, (k, r) => k.grantEncrypt(r));
  for (const role of keyed) {
    for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*']) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason:
          "Data-key actions on the customer managed key of the user's table or bucket only, as KMS grants write them.",
      });
    }
  }
}

/**
 * `pk`/`sk` strings, TTL on `ttl` (garbage collection only), on demand, point-in-time recovery.
 * TableV2 (AWS::DynamoDB::GlobalTable) is the current table API: replicas can be added later
 * without replacing the table, which a move from Table to TableV2 would require.
 */
export function createCacheTable(scope: Construct, options: StorageOptions): TableV2 {
  return new TableV2(scope, 'CacheTable', {
    partitionKey: { name: 'pk', type: AttributeType.STRING },
    sortKey: { name: 'sk', type: AttributeType.STRING },
    billing: Billing.onDemand(),
    timeToLiveAttribute: 'ttl',
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: options.removalPolicy !== RemovalPolicy.DESTROY,
    removalPolicy: options.removalPolicy,
    // Sparse: only STARTED/FAILED REQ#, LOCK and broken META rows carry its key (see
    // `StatusIndex` in core/page/rows.ts), so it costs writes for those rows alone.
    globalSecondaryIndexes: [
      {
        indexName: StatusIndex.Name,
        partitionKey: { name: StatusIndex.PartitionKey, type: AttributeType.STRING },
        sortKey: { name: StatusIndex.SortKey, type: AttributeType.NUMBER },
        projectionType: ProjectionType.ALL,
      },
    ],
  });
}

/**
 * Private, TLS 1.2+ only, SSE-S3, versioned. Bodies are immutable (every render writes a new
 * key) and a body is deleted only once neither META nor a kept version (VER#) points to it. The
 * bucket is versioned so that a deleted body is kept for `supersededBodyExpirationDays` counted
 * from the delete (S3 counts noncurrent days from when a version became noncurrent): reads in
 * flight finish, and an operator can still restore it. A lifecycle expiration on current
 * objects would count from the object's creation instead, so a page live for a month would be
 * expired the day it was superseded: that is why versions are used, not an expiration.
 */
export function createBodyBucket(scope: Construct, options: StorageOptions): Bucket {
  const logs = options.accessLogsBucket;
  return new Bucket(scope, 'Bodies', {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    removalPolicy: options.removalPolicy,
    serverAccessLogsBucket: logs,
    serverAccessLogsPrefix: logs ? 's3-bodies/' : undefined,
    versioned: true,
    lifecycleRules: [
      {
        id: 'ExpireRetiredBodies',
        prefix: options.bodyKeyPrefix,
        noncurrentVersionExpiration: Duration.days(options.supersededBodyExpirationDays),
      },
      // Once its last noncurrent version is gone, a delete marker is removed too.
      { id: 'RemoveExpiredDeleteMarkers', expiredObjectDeleteMarker: true },
      {
        // Bodies an earlier release tagged instead of deleting: expiring them deletes them,
        // and the noncurrent rule above keeps them for the retention period from then.
        id: 'ExpireSupersededBodies',
        prefix: options.bodyKeyPrefix,
        tagFilters: { [SupersededTag.Key]: SupersededTag.Value },
        expiration: Duration.days(1),
      },
      { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
    ],
  });
}
