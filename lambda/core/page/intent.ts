import * as v from 'valibot';
import { sha256Hex } from './cache-key.js';
import { parseMessageBody } from '../queue-message.js';
import type { CacheMeta } from './model.js';

/**
 * The regeneration intent: the message the origin queues when it serves a stale page and the
 * worker consumes. Versioned, strict, small: the worker re-derives the cache key from it with the
 * same normaliser, so a message can never name a key the origin would have rejected.
 */
const text = (min: number, max: number) =>
  v.pipe(v.string(), v.minLength(min, `must be at least ${min} characters`), v.maxLength(max));

export const RegenerationIntentSchema = v.strictObject({
  v: v.literal(1),
  tenant: v.optional(text(0, 64)),
  /** Canonical path of the cache key. */
  path: text(1, 4096),
  /** Canonical query of the cache key ('' when none). */
  query: v.optional(text(0, 4096), ''),
  /** Canonical variant of the cache key (`core/page/variants.ts`); absent for the page itself. */
  variant: v.optional(text(1, 512)),
  /** Deployment the intent was made under; part of the request hash. */
  deployId: text(1, 128),
  /** `generated_at` of the stale generation that was served; absent for a forced regeneration. */
  observedGeneratedAt: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  observedEtag: v.optional(text(0, 256)),
  /**
   * A revalidation with `regenerate: true` deferred this page's CDN purge: once its live
   * generation is published after the mark, the worker sends the purge (`core/revalidate/soft-purge.ts`).
   */
  purge: v.optional(v.strictObject({ effectId: text(1, 64) })),
});
export type RegenerationIntent = v.InferOutput<typeof RegenerationIntentSchema>;

export const encodeIntent = (intent: RegenerationIntent): string => JSON.stringify(intent);

/** @throws InvalidMessageError saying which field is wrong. */
export const parseIntent = (body: string): RegenerationIntent =>
  parseMessageBody(RegenerationIntentSchema, body, 'a regeneration intent');

/** The page an intent regenerates: its key's address, and the partition its rows live in. */
export interface IntentPage {
  readonly tenant: string | undefined;
  readonly path: string;
  readonly query: string;
  /** The canonical variant, for a variant's key. */
  readonly variant?: string | undefined;
  readonly pk: string;
}

/**
 * Why a regeneration is queued, which with the page is all its FIFO deduplication ID keys on:
 * - `stale`: a stale hit. Every hit on one generation within one window collapses into one
 *   message (one message ID, the worker's idempotency key). The window is short, well under
 *   SQS's 5-minute dedupe memory, so an attempt that failed or was dropped is queued again by
 *   the next stale hit after at most `windowSeconds`; a new generation, etag or revalidation
 *   always makes a new intent.
 * - `revalidation`: a revalidation that asked for its pages to be regenerated: one intent per
 *   page per revalidation (its retries included), never held back by a failure backoff.
 */
export type IntentCause =
  | {
      readonly kind: 'stale';
      readonly meta: Pick<CacheMeta, 'generatedAt' | 'etag' | 'revalidatedAt'>;
      readonly nowSeconds: number;
      readonly windowSeconds: number;
    }
  | {
      readonly kind: 'revalidation';
      readonly effectId: string;
      /** The page's CDN purge waits for its new generation (a soft purge). */
      readonly purge?: boolean | undefined;
    };

/** An intent as it is queued: the message, and the FIFO identity SQS keys it by. */
export interface QueuedIntent {
  readonly intent: RegenerationIntent;
  readonly deduplicationId: string;
  readonly groupId: string;
}

/**
 * The one builder of regeneration intents, with the one dedupe scheme: the ID hashes the page,
 * the deployment and what the cause says makes this intent new. A stale hit's intent names the
 * generation it saw (so the worker skips it once a newer one is live); a revalidation's does not.
 */
export function regenerationIntent(
  page: IntentPage,
  deployId: string,
  cause: IntentCause,
): QueuedIntent {
  const observed =
    cause.kind === 'stale'
      ? {
          observedGeneratedAt: cause.meta.generatedAt,
          ...(cause.meta.etag === undefined ? {} : { observedEtag: cause.meta.etag }),
        }
      : {};
  return {
    intent: {
      v: 1,
      ...(page.tenant === undefined ? {} : { tenant: page.tenant }),
      path: page.path,
      query: page.query,
      ...(page.variant ? { variant: page.variant } : {}),
      deployId,
      ...observed,
      ...(cause.kind === 'revalidation' && cause.purge === true
        ? { purge: { effectId: cause.effectId } }
        : {}),
    },
    deduplicationId: sha256Hex([page.pk, deployId, ...identityOf(cause)].join('|')),
    groupId: messageGroupOf(page.pk),
  };
}

/** What makes an intent of this cause new, besides its page and deployment. */
function identityOf(cause: IntentCause): (string | number)[] {
  if (cause.kind === 'revalidation') return [cause.kind, cause.effectId];
  const { meta } = cause;
  const window = Math.floor(cause.nowSeconds / cause.windowSeconds);
  // A revalidation of the same generation makes a new intent: it must not be deduped away.
  return [cause.kind, meta.generatedAt, meta.etag ?? '', meta.revalidatedAt ?? '', window];
}

/**
 * The FIFO message group of a cache key's intents: the key itself (hashed, since a group ID is
 * at most 128 characters). SQS hands out one message of a group at a time, so a shared group
 * would make one failing page hold back every page that shares it for as long as its retries
 * last; with a group per key only that page waits. Concurrency stays bounded by the event
 * source's maximum concurrency, not by the number of groups.
 */
export const messageGroupOf = (pk: string): string => sha256Hex(pk);
