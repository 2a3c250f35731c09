/**
 * The fan-out step as a message on the regeneration queue: one tag's marking from a cursor. Its
 * `kind` tells it from a regeneration intent; the dedupe id is the step itself, so a duplicate
 * send of one step collapses (SQS FIFO, 5 minutes) and a late one loses on the cursor.
 */
import * as v from 'valibot';
import { sha256Hex } from '../page/cache-key.js';
import { parseMessageBody } from '../queue-message.js';
import type { FanOutProgress } from './ports.js';

export const FAN_OUT_KIND = 'fan-out';

const text = (min: number, max: number) => v.pipe(v.string(), v.minLength(min), v.maxLength(max));

export const FanOutMessageSchema = v.strictObject({
  kind: v.literal(FAN_OUT_KIND),
  v: v.literal(1),
  tenant: v.optional(text(0, 64)),
  effectId: text(1, 64),
  mode: v.picklist(['stale', 'expire']),
  tag: text(1, 1024),
  regenerate: v.boolean(),
  /** Where this step starts in the tag index; '' for its start. */
  cursor: text(0, 4096),
});
export type FanOutMessage = v.InferOutput<typeof FanOutMessageSchema>;

/** Whether a queue message is a fan-out step (by its `kind`), before it is validated. */
export function isFanOutBody(body: string): boolean {
  try {
    return (JSON.parse(body) as { kind?: unknown } | null)?.kind === FAN_OUT_KIND;
  } catch {
    return false;
  }
}

/** @throws InvalidMessageError (terminal: to the DLQ with this reason) */
export const parseFanOut = (body: string): FanOutMessage =>
  parseMessageBody(FanOutMessageSchema, body, 'a fan-out step');

/** A queued fan-out step: its body, dedupe id and group (one group per effect and tag). */
export interface QueuedFanOut {
  readonly body: string;
  readonly deduplicationId: string;
  readonly groupId: string;
}

/** The step that carries `progress` on from `cursor`; `resend` marks a sweeper's resend. */
export function fanOutMessage(
  progress: Pick<FanOutProgress, 'tenant' | 'effectId' | 'mode' | 'tag' | 'regenerate'>,
  cursor: string,
  resend?: string,
): QueuedFanOut {
  const message: FanOutMessage = {
    kind: FAN_OUT_KIND,
    v: 1,
    ...(progress.tenant === undefined ? {} : { tenant: progress.tenant }),
    effectId: progress.effectId,
    mode: progress.mode,
    tag: progress.tag,
    regenerate: progress.regenerate,
    cursor,
  };
  const { effectId, mode, tag } = progress;
  const step = [effectId, mode, tag, cursor, ...(resend === undefined ? [] : [resend])];
  return {
    body: JSON.stringify(message),
    deduplicationId: sha256Hex(step.join('|')),
    groupId: sha256Hex([progress.tenant ?? '', effectId, tag].join('|')),
  };
}
