/**
 * What the worker decided for a regeneration intent, logged as `decision` and counted as a
 * metric (the names operators search for and the alarms key on). A regeneration itself ends in a
 * few of these (`RegenerateOutcome`); the others are the worker's: how its idempotency, backoff,
 * and error handling ended the intent. And what then becomes of its message (`Disposition`),
 * which a revalidation's soft purge reads too (`revalidate/soft-purge.ts`).
 */
export const Decision = {
  New: 'new',
  /** Rendered, equal to the live generation: its freshness moved on, nothing else was written. */
  Unchanged: 'unchanged',
  /** A 404 or 410 of a path never published, kept inline in one row (no body object, no version). */
  Gone: 'gone',
  Fresh: 'fresh',
  Duplicate: 'duplicate',
  Conflict: 'conflict',
  LeaseHeld: 'lease-held',
  LeaseLost: 'lease-lost',
  Superseded: 'superseded',
  Refused: 'refused',
  RenderFailed: 'render-failed',
  Backoff: 'backoff',
  InProgress: 'in-progress',
  Retry: 'retry',
  Poison: 'poison',
  /** An operator holds the page (`isr hold`, `isr rollback --hold`): not regenerated. */
  Held: 'held',
  /** An ignorable error ended the work: someone else did, or is doing, it. */
  Ignored: 'ignored',
  /** Past the regeneration budget: kept as a deferred row until a window has room. */
  Deferred: 'deferred',
} as const;
export type Decision = (typeof Decision)[keyof typeof Decision];

/** What to do with a message: acknowledge it, retry it later, or dead-letter it with a reason. */
export type Disposition = {
  readonly decision: Decision;
  readonly detail?: Record<string, unknown>;
} & (
  | { readonly action: 'ack' }
  | { readonly action: 'retry'; readonly error: unknown }
  | { readonly action: 'dead-letter'; readonly reason: { code: string; message: string } }
);
