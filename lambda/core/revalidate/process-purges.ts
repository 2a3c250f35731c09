/**
 * The purger's use case: one batch of the purge queue (soft purges of published pages, deadline
 * purges of revalidations) turned into as few CDN invalidations as the CDN allows. Each message
 * is read strictly: one the purger cannot read is dead-lettered with its reason on its first
 * receive. The rest are grouped by effect, each effect's tags deduplicated, and every effect's
 * purge is asked for at once: the CloudFront adapter coalesces calls made together into one
 * invalidation, split only past 3,000 items, and keeps what CloudFront throttles as pending rows
 * for the sweeper, so a purge is acknowledged once it is submitted or recorded.
 */
import { ErrorKind, failureOf, RETRIES_EXHAUSTED } from '../errors.js';
import type { CdnInvalidator, CdnPurge } from '../page/ports.js';
import { parsePurge, type PurgeMessage } from './purge-message.js';

/** One record of the purge queue, as the purger needs it. */
export interface PurgerMessage {
  readonly messageId: string;
  readonly body: string;
  /** How many times SQS has handed this message out, this time included. */
  readonly receiveCount: number;
}

export interface PurgerDeps {
  readonly cdn: CdnInvalidator;
  /** Receives after which a purge that keeps failing is dead-lettered instead of retried. */
  readonly maxReceiveCount: number;
}

/** What became of one message: purged (or recorded for the sweeper), retried, or dead-lettered. */
export type PurgeReport = {
  readonly messageId: string;
  readonly effectId: string | undefined;
  /** The CDN's answer (`submitted`, `pending`, `not-configured`), or why there was none. */
  readonly outcome: CdnPurge['status'] | 'poison' | 'refused' | 'retry';
  /** Tags the message named. */
  readonly tags: number;
} & (
  | { readonly action: 'ack'; readonly invalidationIds?: readonly string[] | undefined }
  | { readonly action: 'retry'; readonly error: unknown }
  | { readonly action: 'dead-letter'; readonly reason: { code: string; message: string } }
);

/** The valid messages of one effect and their tags, each tag once. */
interface EffectPurge {
  readonly messages: { readonly record: PurgerMessage; readonly purge: PurgeMessage }[];
  readonly tags: Set<string>;
}

/**
 * Purges a batch (see the module comment). @returns one report per message, in order: the
 * handler acknowledges, retries (batch item failures) or dead-letters each.
 */
export async function processPurges(
  deps: PurgerDeps,
  batch: readonly PurgerMessage[],
): Promise<PurgeReport[]> {
  const reports = new Map<PurgerMessage, PurgeReport>();
  const effects = new Map<string, EffectPurge>();
  for (const record of batch) {
    let purge: PurgeMessage;
    try {
      purge = parsePurge(record.body);
    } catch (error) {
      const { code, message } = failureOf(error);
      const poison = { messageId: record.messageId, effectId: undefined, tags: 0 };
      reports.set(record, {
        ...poison,
        outcome: 'poison',
        action: 'dead-letter',
        reason: { code, message },
      });
      continue;
    }
    const effect = effects.get(purge.effectId) ?? { messages: [], tags: new Set<string>() };
    effect.messages.push({ record, purge });
    for (const tag of purge.tags) effect.tags.add(tag.toLowerCase());
    effects.set(purge.effectId, effect);
  }
  // Asked for together, so the CDN adapter makes one invalidation of every effect's tags.
  await Promise.all(
    [...effects].map(async ([effectId, effect]) => {
      for (const [record, report] of await purgeEffect(deps, effectId, effect)) {
        reports.set(record, report);
      }
    }),
  );
  return batch.map((record) => reports.get(record) as PurgeReport);
}

/** One effect's purge, and what it means for each of its messages. */
async function purgeEffect(
  deps: PurgerDeps,
  effectId: string,
  effect: EffectPurge,
): Promise<[PurgerMessage, PurgeReport][]> {
  const of = (record: PurgerMessage, purge: PurgeMessage) => ({
    messageId: record.messageId,
    effectId,
    tags: purge.tags.length,
  });
  try {
    const cdn = await deps.cdn.invalidateTags([...effect.tags].sort(), { effectId });
    const invalidationIds = cdn.status === 'submitted' ? cdn.invalidationIds : undefined;
    return effect.messages.map(({ record, purge }) => [
      record,
      { ...of(record, purge), outcome: cdn.status, action: 'ack', invalidationIds },
    ]);
  } catch (error) {
    return effect.messages.map(({ record, purge }) => [
      record,
      { ...of(record, purge), ...failedPurge(error, record, deps.maxReceiveCount) },
    ]);
  }
}

/**
 * What a failed purge means for one of its messages: refused for good (CdnPurgeRejectedError:
 * an invalid tag, AccessDenied, NoSuchDistribution) -> the DLQ now; anything else -> retried
 * until its last receive, then the DLQ. (The worker's `dispositionOfError`, without the
 * idempotency engine it would bring into the purger's bundle.)
 */
function failedPurge(error: unknown, record: PurgerMessage, maxReceiveCount: number) {
  const failure = failureOf(error);
  if (failure.kind === ErrorKind.Terminal) {
    const reason = { code: failure.code, message: failure.message };
    return { outcome: 'refused', action: 'dead-letter', reason } as const;
  }
  if (record.receiveCount < maxReceiveCount) {
    return { outcome: 'retry', action: 'retry', error } as const;
  }
  const reason = {
    code: RETRIES_EXHAUSTED,
    message: `gave up after ${record.receiveCount} receives: ${failure.message}`,
  };
  return { outcome: 'retry', action: 'dead-letter', reason } as const;
}
