import { z } from 'zod';
import { InvalidMessageError } from './errors.js';

/**
 * The regeneration intent: the message the origin queues when it serves a stale page and the
 * worker consumes. Versioned, strict, small: the worker re-derives the cache key from it with the
 * same normaliser, so a message can never name a key the origin would have rejected.
 */
export const RegenerationIntentSchema = z.strictObject({
  v: z.literal(1),
  tenant: z.string().max(64).optional(),
  /** Canonical path of the cache key. */
  path: z.string().min(1).max(4096),
  /** Canonical query of the cache key ('' when none). */
  query: z.string().max(4096).default(''),
  /** Deployment the intent was made under; part of the request hash. */
  deployId: z.string().min(1).max(128),
  /** `generated_at` of the stale generation that was served; absent for a forced regeneration. */
  observedGeneratedAt: z.number().int().nonnegative().optional(),
  observedEtag: z.string().max(256).optional(),
});
export type RegenerationIntent = z.infer<typeof RegenerationIntentSchema>;

export const encodeIntent = (intent: RegenerationIntent): string => JSON.stringify(intent);

/** @throws InvalidMessageError saying which field is wrong. */
export function parseIntent(body: string): RegenerationIntent {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new InvalidMessageError('message body is not JSON', { cause: error });
  }
  const parsed = RegenerationIntentSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
      .join('; ');
    throw new InvalidMessageError(`message body is not a regeneration intent: ${issues}`);
  }
  return parsed.data;
}
