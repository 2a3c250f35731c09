/**
 * Where pages live: the cache table (META, LOCK and REQ# rows in the FaceTheory schema) and the
 * body bucket (one immutable object per generation). Both are retained by default.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  ObjectOwnership,
  type IBucket,
} from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { StatusIndex, SupersededTag } from '../lambda/core/rows.js';

export interface StorageOptions {
  readonly removalPolicy: RemovalPolicy;
  readonly supersededBodyExpirationDays: number;
  readonly bodyKeyPrefix: string;
  /** @default - no server access logs */
  readonly accessLogsBucket?: IBucket | undefined;
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
    // `StatusIndex` in core/rows.ts), so it costs writes for those rows alone.
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
