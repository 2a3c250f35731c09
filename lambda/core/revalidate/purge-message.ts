/**
 * A CDN purge as a message on the purge queue, for the purger (`process-purges.ts`): the CDN
 * tags of one revalidation's effect, sent either when a page's new generation is published
 * (`published`, a soft purge: one page's key tag, at once) or as the deadline (`deadline`: the
 * revalidation's tags and paths, delayed), so a page whose regeneration failed is purged anyway.
 * Strict and small: a message the purger cannot read goes to its DLQ with the reason.
 */
import * as v from 'valibot';
import { cdnKeyTagOf } from '../page/cache-tags.js';
import type { CacheKey } from '../page/model.js';
import { cdnTagProblem, chunksOf } from '../cdn-purge.js';
import { parseMessageBody } from '../queue-message.js';

export const PURGE_KIND = 'cdn-purge';
/**
 * Tags one message carries at most: 100 tags of 256 characters keep a message near 26 KB, far
 * within SQS's 256 KB, whatever the revalidation's limits (`revalidateMaxPaths`/`_Tags`).
 */
export const MAX_TAGS_PER_PURGE_MESSAGE = 100;

export const PurgeReason = { Published: 'published', Deadline: 'deadline' } as const;
export type PurgeReason = (typeof PurgeReason)[keyof typeof PurgeReason];

const cdnTag = v.pipe(
  v.string(),
  v.check((tag) => cdnTagProblem(tag) === undefined, 'is not a CDN tag CloudFront accepts'),
);

export const PurgeMessageSchema = v.strictObject({
  kind: v.literal(PURGE_KIND),
  v: v.literal(1),
  /** The revalidation the purge belongs to: its identity at the CDN (CallerReference). */
  effectId: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  reason: v.picklist(Object.values(PurgeReason)),
  /** CDN tags (`cdnTagOf`, `cdnKeyTagOf`), without CloudFront's `#`. */
  tags: v.pipe(v.array(cdnTag), v.minLength(1), v.maxLength(MAX_TAGS_PER_PURGE_MESSAGE)),
});
export type PurgeMessage = v.InferOutput<typeof PurgeMessageSchema>;

/** A purge as it is queued: its body, and how long SQS keeps it from the purger. */
export interface QueuedPurge {
  readonly body: string;
  readonly delaySeconds: number;
}

const queued = (message: PurgeMessage, delaySeconds: number): QueuedPurge => ({
  body: JSON.stringify(message),
  delaySeconds,
});

/** The soft purge of a page whose new generation is live: its key tag (every variant), at once. */
export const softPurgeOf = (
  effectId: string,
  cacheKey: Pick<CacheKey, 'tenant' | 'hash' | 'pageHash'>,
): QueuedPurge =>
  queued(
    {
      kind: PURGE_KIND,
      v: 1,
      effectId,
      reason: PurgeReason.Published,
      tags: [cdnKeyTagOf(cacheKey)],
    },
    0,
  );

/** The deadline purge of `tags`, `delaySeconds` from now: as many messages as the tags need. */
export const deadlinePurgesOf = (
  effectId: string,
  tags: readonly string[],
  delaySeconds: number,
): QueuedPurge[] =>
  chunksOf([...new Set(tags)], MAX_TAGS_PER_PURGE_MESSAGE).map((chunk) =>
    queued(
      { kind: PURGE_KIND, v: 1, effectId, reason: PurgeReason.Deadline, tags: chunk },
      delaySeconds,
    ),
  );

/** @throws InvalidMessageError saying which field is wrong (terminal: to the DLQ with it) */
export const parsePurge = (body: string): PurgeMessage =>
  parseMessageBody(PurgeMessageSchema, body, 'a CDN purge');
