/**
 * Soft purges as the revalidate function and the worker send them: the purge queue, the deadline
 * and the bound, from their configuration (`config.ts` `softPurgeOf`). No CloudFront client: the
 * purger alone calls the CDN, so the worker's bundle stays within its budget.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SqsPurgeQueue } from '../adapters/purge-queue/sqs.js';
import type { SoftPurgeDeps } from '../core/revalidate/soft-purge.js';

export interface SoftPurgeConfig {
  readonly queueUrl: string;
  readonly deadlineSeconds: number;
  readonly maxPagesPerEffect: number;
}

/** The soft purge deps, or undefined without a purge queue (a revalidation purges at once). */
export function softPurgeDepsOf(
  config: SoftPurgeConfig | undefined,
  sqs: SQSClient,
): SoftPurgeDeps | undefined {
  if (config === undefined) return undefined;
  return {
    queue: new SqsPurgeQueue({ client: sqs, queueUrl: config.queueUrl }),
    deadlineSeconds: config.deadlineSeconds,
    maxPagesPerEffect: config.maxPagesPerEffect,
  };
}
