import * as v from 'valibot';
import { InvalidMessageError } from './errors.js';

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
  /** Deployment the intent was made under; part of the request hash. */
  deployId: text(1, 128),
  /** `generated_at` of the stale generation that was served; absent for a forced regeneration. */
  observedGeneratedAt: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  observedEtag: v.optional(text(0, 256)),
});
export type RegenerationIntent = v.InferOutput<typeof RegenerationIntentSchema>;

export const encodeIntent = (intent: RegenerationIntent): string => JSON.stringify(intent);

/** @throws InvalidMessageError saying which field is wrong. */
export function parseIntent(body: string): RegenerationIntent {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new InvalidMessageError('message body is not JSON', { cause: error });
  }
  const parsed = v.safeParse(RegenerationIntentSchema, json);
  if (!parsed.success) {
    const issues = parsed.issues
      .map((issue) => `${v.getDotPath(issue) ?? '(body)'}: ${issue.message}`)
      .join('; ');
    throw new InvalidMessageError(`message body is not a regeneration intent: ${issues}`);
  }
  return parsed.output;
}
