/**
 * The worker's use case: one regeneration intent off the queue, turned into at most one
 * published generation and a disposition for the message (see `processMessage`).
 */
import { normaliseCacheKey } from '../page/cache-key.js';
import type { CacheKey, CacheMeta } from '../page/model.js';
import { DEFAULT_FAILURE_POLICY, retryState, RetryState } from '../backoff.js';
import { epochSeconds } from '../clock.js';
import { Decision, type Disposition } from '../decision.js';
import { isAnswered, isHeld, type Need } from '../page/freshness.js';
import { runOnce, type IdempotentCall } from '../idempotency.js';
import { parseIntent, type RegenerationIntent } from '../page/intent.js';
import { variantHeadersOf } from '../page/variants.js';
import { dispositionOfError, dispositionOfRun } from './disposition.js';
import { settleIntent } from './settle-intent.js';
import { isFanOutBody } from '../revalidate/fan-out-message.js';
import { processFanOut } from './process-fan-out.js';
import { spendOrDefer } from './budget.js';
import { sendSoftPurge } from '../revalidate/soft-purge.js';
import type { MessageReport, WorkerDeps, WorkerMessage } from './deps.js';

/**
 * Turns one regeneration intent into at most one published generation. Order (seed 000, as
 * corrected in DESIGN.md): an operator holds the page -> done; META answers it -> done; the page is backing off after failures ->
 * done (unless the intent was explicit); past the regeneration budget -> deferred (`budget.ts`);
 * REQ# COMPLETED -> recorded result; STARTED and
 * unexpired -> retry later; different request for the same message ID -> refuse; lease held ->
 * done (the holder regenerates); render; body; one publish transaction that seals REQ#. An
 * intent a revalidation flagged for a soft purge sends it, once its page is published, before
 * the message is acknowledged (`revalidate/soft-purge.ts`).
 */
export async function processMessage(
  deps: WorkerDeps,
  message: WorkerMessage,
): Promise<MessageReport> {
  if (deps.fanOut !== undefined && isFanOutBody(message.body)) {
    return processFanOut(deps.fanOut, message, deps.maxReceiveCount);
  }
  let parsed: { intent: RegenerationIntent; cacheKey: CacheKey };
  try {
    parsed = parseMessage(deps, message);
  } catch (error) {
    const report = { idempotencyKey: message.messageId, cacheKeyHash: undefined };
    return { ...report, ...dispositionOfError(error, message, deps.maxReceiveCount) };
  }
  const { intent, cacheKey } = parsed;
  const report = { idempotencyKey: message.messageId, cacheKeyHash: cacheKey.hash };
  const need: Need = { kind: 'intent', observedGeneratedAt: intent.observedGeneratedAt };
  try {
    // Strongly consistent: an eventually consistent read can return META from before a
    // revalidation's mark, still fresh, and the intent would be acknowledged as answered.
    const meta = await deps.cacheTable.getMeta(cacheKey.pk, { consistent: true });
    const settled = { intent, cacheKey };
    const skip = skipped(deps, intent, meta, need);
    if (skip !== undefined) {
      const purge = { ...settled, disposition: skip, decided: skip.decision };
      return { ...report, ...(await sendSoftPurge(deps, purge)) };
    }
    // Past the regeneration budget the intent is deferred (one row per page), not rendered.
    const deferred =
      deps.budget === undefined
        ? undefined
        : await spendOrDefer(
            deps.budget,
            { pk: cacheKey.pk, intent, body: message.body },
            epochSeconds(deps.clock),
          );
    if (deferred !== undefined) return { ...report, ...deferred };
    const call: IdempotentCall = {
      pk: cacheKey.pk,
      key: message.messageId,
      request: {
        tenant: cacheKey.tenant ?? null,
        cacheKey: cacheKey.key,
        deployId: intent.deployId,
      },
    };
    const lastReceive = message.receiveCount >= deps.maxReceiveCount;
    const run = await runOnce(deps.idempotency, call, (claimed) =>
      settleIntent(deps, claimed, cacheKey, need, meta, lastReceive),
    );
    // A replay answers with what the first delivery decided: the page may be published since.
    const decided = run.status === 'replayed' ? run.outcome.decision : undefined;
    const disposition = dispositionOfRun(deps, run);
    const purge = { ...settled, disposition, decided: decided ?? disposition.decision };
    return { ...report, ...(await sendSoftPurge(deps, purge)) };
  } catch (error) {
    return { ...report, ...dispositionOfError(error, message, deps.maxReceiveCount) };
  }
}

/**
 * An intent acknowledged without a claim or a render: the page is held, already answers the
 * intent, or (for an intent a stale hit queued) is backing off after failures.
 */
function skipped(
  deps: WorkerDeps,
  intent: RegenerationIntent,
  meta: CacheMeta | undefined,
  need: Need,
): Disposition | undefined {
  const now = epochSeconds(deps.clock);
  // An operator's hold stops every intent, explicit ones too, until it ends or is lifted.
  if (isHeld(meta, now)) {
    return { decision: Decision.Held, action: 'ack', detail: { holdUntil: meta?.holdUntil } };
  }
  if (isAnswered(meta, now, need)) return { decision: Decision.Fresh, action: 'ack' };
  // An intent queued by a stale hit waits out the page's backoff; an explicit one does not.
  const policy = deps.failurePolicy ?? DEFAULT_FAILURE_POLICY;
  const state = retryState(meta?.failures, now, policy, meta?.ttl);
  if (intent.observedGeneratedAt !== undefined && state !== RetryState.Due) {
    const detail = { retryState: state, failures: meta?.failures };
    return { decision: Decision.Backoff, action: 'ack', detail };
  }
  return undefined;
}

/** The intent and its cache key. @throws InvalidMessageError, InvalidCacheKeyError (terminal) */
function parseMessage(deps: WorkerDeps, message: WorkerMessage) {
  const intent = parseIntent(message.body);
  const cacheKey = normaliseCacheKey(
    {
      tenant: intent.tenant,
      rawPath: intent.path,
      rawQueryString: intent.query,
      variantHeaders: variantHeadersOf(intent.variant ?? ''),
    },
    deps.keyPolicy,
  );
  return { intent, cacheKey };
}
