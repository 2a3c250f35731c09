/**
 * CDN purges as CloudFront invalidations by cache tag (`#tag` items, CreateInvalidation; see
 * core/cdn-purge.ts for the documented limits). Calls made within a short window share one
 * invalidation; one is split only past CloudFront's 3,000 items. While CloudFront throttles
 * (TooManyInvalidationsInProgress, throttling, 5xx), it backs off with jitter for a bounded
 * time, then records the purge as pending (`PendingPurges`) for `retryPendingPurges`: no purge
 * is dropped. The CallerReference is the purge's identity: CloudFront answers a repeated
 * reference with the same batch by returning the invalidation it already made (API Reference,
 * CreateInvalidation), so retries never duplicate one.
 */
import { randomUUID } from 'node:crypto';
import { CreateInvalidationCommand, type CloudFrontClient } from '@aws-sdk/client-cloudfront';
import {
  CDN_TAG_ITEM_PREFIX,
  chunksOf,
  DEFAULT_PURGE_BACKOFF,
  MAX_TAGS_PER_INVALIDATION,
  purgeDelayMs,
  purgeIdOf,
  purgeTagsOf,
  type PurgeBackoff,
} from '../../core/cdn-purge.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { CdnPurgeRejectedError } from '../../core/errors.js';
import { systemRandom, type Random } from '../../core/random.js';
import type { CdnInvalidator, CdnPurge, CdnPurgeOptions } from '../../core/page/ports.js';
import type {
  PendingPurge,
  PendingPurges,
  PendingPurgeSubmitter,
  PurgeAttempt,
} from '../../core/operate/ports.js';

/** Where invalidation ids and pending purges are reported (Powertools Logger fits). */
export interface PurgeLog {
  info(message: string, extra: Record<string, unknown>): void;
  warn(message: string, extra: Record<string, unknown>): void;
}

export interface CloudFrontInvalidatorOptions {
  readonly client: CloudFrontClient;
  readonly distributionId: string;
  /** Where a purge CloudFront did not accept in time waits for the sweeper. */
  readonly pending: PendingPurges;
  /** Times the backoff and the coalescing window. @default systemClock */
  readonly clock?: Clock | undefined;
  readonly logger?: PurgeLog | undefined;
  /** @default DEFAULT_PURGE_BACKOFF */
  readonly backoff?: PurgeBackoff | undefined;
  /** How long a purge waits for others to join its invalidation. @default 20 */
  readonly coalesceWindowMs?: number | undefined;
  /** @default MAX_TAGS_PER_INVALIDATION (3,000) */
  readonly maxTagsPerInvalidation?: number | undefined;
  /** Jitter of the backoff. @default systemRandom */
  readonly random?: Random | undefined;
}

type Submitted = Extract<PurgeAttempt, { status: 'submitted' }>;
/** Still throttled when the backoff budget ran out, after `attempts` submissions. */
type GaveUp = Extract<PurgeAttempt, { status: 'throttled' }> & { readonly attempts: number };

/** Purges that share one invalidation: the calls made while it waited. */
interface Batch {
  readonly tags: Set<string>;
  readonly effectIds: Set<string>;
  /** A call without an effect joined: the purge cannot have a deterministic identity. */
  anonymous: boolean;
  result?: Promise<CdnPurge>;
}

const THROTTLED = new Set([
  'TooManyInvalidationsInProgress',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
]);

const consoleLog: PurgeLog = {
  info: (message, extra) => console.log(JSON.stringify({ level: 'INFO', message, ...extra })),
  warn: (message, extra) => console.warn(JSON.stringify({ level: 'WARN', message, ...extra })),
};

/** The CloudFront `CdnInvalidator`, and the sweeper's way to resubmit what is pending. */
export class CloudFrontInvalidator implements CdnInvalidator, PendingPurgeSubmitter {
  readonly #client: CloudFrontClient;
  readonly #distributionId: string;
  readonly #pending: PendingPurges;
  readonly #clock: Clock;
  readonly #log: PurgeLog;
  readonly #backoff: PurgeBackoff;
  readonly #windowMs: number;
  readonly #maxTags: number;
  readonly #random: Random;
  #open: Batch | undefined;

  constructor(options: CloudFrontInvalidatorOptions) {
    this.#client = options.client;
    this.#distributionId = options.distributionId;
    this.#pending = options.pending;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger ?? consoleLog;
    this.#backoff = options.backoff ?? DEFAULT_PURGE_BACKOFF;
    this.#windowMs = options.coalesceWindowMs ?? 20;
    this.#maxTags = Math.min(
      options.maxTagsPerInvalidation ?? MAX_TAGS_PER_INVALIDATION,
      MAX_TAGS_PER_INVALIDATION,
    );
    this.#random = options.random ?? systemRandom;
  }

  /** Joins the open batch (or opens one); every caller of a batch gets the batch's outcome. */
  invalidateTags(tags: readonly string[], options: CdnPurgeOptions = {}): Promise<CdnPurge> {
    let items: string[];
    try {
      items = purgeTagsOf(tags);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    if (items.length === 0) return Promise.resolve({ status: 'submitted', invalidationIds: [] });
    let batch = this.#open;
    if (batch === undefined) {
      batch = { tags: new Set(), effectIds: new Set(), anonymous: false };
      this.#open = batch;
      batch.result = this.#submitAfterWindow(batch);
    }
    for (const tag of items) batch.tags.add(tag);
    if (options.effectId === undefined) batch.anonymous = true;
    else batch.effectIds.add(options.effectId);
    return batch.result as Promise<CdnPurge>;
  }

  /** One attempt under the purge's own identity: no waiting, no new pending record. */
  resubmit(purge: PendingPurge): Promise<PurgeAttempt> {
    return this.#submitOnce(purge.id, purge.tags);
  }

  async #submitAfterWindow(batch: Batch): Promise<CdnPurge> {
    await this.#clock.sleep(this.#windowMs);
    if (this.#open === batch) this.#open = undefined;
    const startedAt = this.#clock.now();
    const tags = [...batch.tags].sort();
    const nonce = randomUUID();
    const identity = batch.anonymous ? { nonce } : { effectIds: [...batch.effectIds] };
    const invalidationIds: string[] = [];
    const pendingIds: string[] = [];
    let reason: string | undefined;
    for (const chunk of chunksOf(tags, this.#maxTags)) {
      const id = purgeIdOf(chunk, identity);
      // Once CloudFront stays saturated past the budget, later chunks go straight to pending.
      const outcome =
        reason === undefined
          ? await this.#submitWithBackoff(id, chunk, startedAt)
          : ({ status: 'throttled', reason, attempts: 0 } satisfies GaveUp);
      if (outcome.status === 'submitted') {
        invalidationIds.push(outcome.invalidationId);
        continue;
      }
      reason = outcome.reason;
      await this.#recordPending(id, chunk, outcome.reason, outcome.attempts);
      pendingIds.push(id);
    }
    if (reason === undefined) return { status: 'submitted', invalidationIds };
    const submitted = invalidationIds.length ? `; submitted ${invalidationIds.join(', ')}` : '';
    return {
      status: 'pending',
      reason: `${reason}; recorded as pending purge ${pendingIds.join(', ')}${submitted}`,
    };
  }

  /** Retries while throttled, with growing jittered waits, until the budget is spent. */
  async #submitWithBackoff(
    id: string,
    tags: readonly string[],
    startedAt: number,
  ): Promise<Submitted | GaveUp> {
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await this.#submitOnce(id, tags);
      if (outcome.status === 'submitted') return outcome;
      const delay = purgeDelayMs(attempt, this.#backoff, this.#random);
      if (this.#clock.now() - startedAt + delay > this.#backoff.budgetMs) {
        return { ...outcome, attempts: attempt };
      }
      this.#log.warn('cdn purge throttled, retrying', {
        purgeId: id,
        attempt,
        delayMs: delay,
        reason: outcome.reason,
      });
      await this.#clock.sleep(delay);
    }
  }

  async #submitOnce(id: string, tags: readonly string[]): Promise<PurgeAttempt> {
    const items = tags.map((tag) => `${CDN_TAG_ITEM_PREFIX}${tag}`);
    try {
      const { Invalidation } = await this.#client.send(
        new CreateInvalidationCommand({
          DistributionId: this.#distributionId,
          InvalidationBatch: {
            CallerReference: id,
            Paths: { Quantity: items.length, Items: items },
          },
        }),
      );
      const invalidationId = Invalidation?.Id;
      if (invalidationId === undefined) {
        throw new CdnPurgeRejectedError(id, `CloudFront returned no invalidation for ${id}`);
      }
      this.#log.info('cdn invalidation created', {
        invalidationId,
        purgeId: id,
        distributionId: this.#distributionId,
        tags: items.length,
      });
      return { status: 'submitted', invalidationId };
    } catch (error) {
      if (error instanceof CdnPurgeRejectedError) throw error;
      const reason = reasonOf(error);
      if (mayPass(error)) return { status: 'throttled', reason };
      throw new CdnPurgeRejectedError(id, `CloudFront refused purge ${id}: ${reason}`, {
        cause: error,
      });
    }
  }

  async #recordPending(id: string, tags: readonly string[], reason: string, attempts: number) {
    await this.#pending.add({ id, tags, reason, recordedAt: this.#clock.now(), attempts });
    this.#log.warn('cdn purge pending', {
      purgeId: id,
      distributionId: this.#distributionId,
      tags: tags.length,
      reason,
    });
  }
}

const reasonOf = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/**
 * Throttling, server faults and network errors (no `$fault`) may pass; any other client fault
 * (InvalidArgument, AccessDenied, NoSuchDistribution, BatchTooLarge) never will.
 */
function mayPass(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  if (THROTTLED.has(error.name)) return true;
  return (error as { $fault?: string }).$fault !== 'client';
}
