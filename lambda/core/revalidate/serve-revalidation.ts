/**
 * `POST /_isr/revalidate`, transport aside: authenticate, check the request, then apply it once
 * per Idempotency-Key. Powertools idempotency over the REQ# row (`runOnce` over a `RequestStore`, the
 * same store the worker uses) keeps the claim, the `request_hash` check and the stored answer, so:
 * a new key applies `revalidate()` and stores its 202; the same key and body get that answer
 * back byte for byte; another body gets a 409 with a diff and nothing is applied; a key still
 * being applied gets a 409 `in-progress` with Retry-After. A failure releases the claim.
 */
import { epochSeconds, type Clock } from '../clock.js';
import {
  runOnce,
  Settlement,
  type Idempotency,
  type JsonValue,
  type RecordedOutcome,
  type RunOnce,
} from '../idempotency.js';
import type { RevalidationStatuses } from './ports.js';
import type { SecretSource } from '../page/ports.js';
import {
  effectIdOf,
  idempotencyKeyOf,
  parseRevalidateBody,
  receiptOf,
  requestDiff,
  requestJson,
  RevalidateRequestError,
  revalidationOf,
  revalidationPartition,
  type CanonicalRevalidation,
  type RevalidatePolicy,
} from './request.js';
import { acceptRevalidation, type AcceptDeps } from './fan-out.js';
import { DryRunLimiter, previewRevalidation } from './dry-run.js';
import { revalidate, type RevalidationDeps } from './revalidation.js';
import { acceptedStatus, doneStatus, statusJson, statusTargetOf } from './revalidation-status.js';
import { statusDeadlineOf } from './soft-purge.js';
import { SIGNATURE_HEADER, signatureRefusal, TIMESTAMP_HEADER } from './webhook-signature.js';
import {
  isTagTimesTarget,
  parseTagTimesBody,
  readTagTimes,
  type TagTimesDeps,
} from './tag-times.js';

/** What the log line of every call says (`decision` as the seeds name them). */
export const RevalidateDecision = {
  New: 'new',
  Duplicate: 'duplicate',
  Conflict: 'conflict',
  InProgress: 'in-progress',
  Invalid: 'invalid',
  Unauthorized: 'unauthorized',
  Failed: 'failed',
  /** A status GET, answered 200 or 404. */
  Status: 'status',
  /** A read of tag revalidation times (`tag-times.ts`), answered 200. */
  TagTimes: 'tag-times',
  /** A previewed revalidation (`dry-run.ts`), answered 200; nothing written. */
  DryRun: 'dry-run',
  /** A dry run past its rate limit, answered 429. */
  Limited: 'limited',
} as const;
export type RevalidateDecision = (typeof RevalidateDecision)[keyof typeof RevalidateDecision];

/**
 * Who may call: `iam` trusts the function URL's AWS_IAM auth (and refuses an event without its
 * principal), `hmac` requires a valid signature, `open` is local mode on loopback only.
 */
export type CallerAuth =
  | { readonly kind: 'iam' }
  | { readonly kind: 'hmac'; readonly secret: SecretSource; readonly skewSeconds: number }
  | { readonly kind: 'open' };

export interface RevalidateServiceDeps {
  readonly revalidation: RevalidationDeps;
  /** Each revalidation's status, by effect id (the status GET). */
  readonly statuses: RevalidationStatuses;
  /** The tag-times read (`tag-times.ts`). Absent: `POST <endpoint>/tag-times` is a 404. */
  readonly tagTimes?: TagTimesDeps | undefined;
  /**
   * Tags marked in the background (`fan-out.ts`): the 202 after a fixed number of calls.
   * Absent: every page is marked before the 202 (`revalidate`).
   */
  readonly background?: Omit<AcceptDeps, keyof RevalidationDeps | 'statuses'> | undefined;
  readonly policy: RevalidatePolicy;
  readonly auth: CallerAuth;
  readonly idempotency: Idempotency;
  readonly clock: Clock;
  /** Retry-After of a 409 `in-progress` and of a 503. */
  readonly retryAfterSeconds: number;
}

export interface RevalidateHttpRequest {
  readonly method: string;
  /** The path as received, with `?query` when there is one: the signature covers it. */
  readonly target: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly rawBody: string;
  /** The IAM principal the function URL authenticated, if any. */
  readonly principal: string | undefined;
}

export interface RevalidateReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** JSON text; a replay returns the stored text as is. */
  readonly body: string;
  readonly log: RevalidateLog;
}

export interface RevalidateLog {
  readonly decision: RevalidateDecision;
  readonly idempotency_key: string | undefined;
  readonly effect_id: string | undefined;
  readonly caller: string | undefined;
  readonly counts?: unknown;
  readonly reason?: string | undefined;
}

/** The answer stored in the REQ# row and replayed for the same key and body. */
type StoredAnswer = { readonly status: number; readonly body: string };

const JSON_TYPE = { 'content-type': 'application/json' };

const reply = (
  status: number,
  body: Record<string, unknown>,
  log: RevalidateLog,
  headers: Record<string, string> = {},
): RevalidateReply => ({
  status,
  headers: { ...JSON_TYPE, ...headers },
  body: JSON.stringify(body),
  log,
});

/**
 * One revalidation request, from authentication to the answer: a 4xx, a 409 or a 503 for every
 * failure it expects. It throws only what it cannot answer: an unexpected error while checking
 * the request, or a store failure while reading the request a reused key was first used with;
 * the handler lets Lambda report those.
 */
export async function serveRevalidation(
  deps: RevalidateServiceDeps,
  request: RevalidateHttpRequest,
): Promise<RevalidateReply> {
  const log = { idempotency_key: undefined, effect_id: undefined, caller: undefined };
  // Authentication comes first: a signature replayed with another method is a 401, not a 405.
  let caller: string;
  try {
    const who = await callerOf(deps, request);
    if (who.refusal !== undefined) {
      return reply(
        401,
        { error: 'unauthorized', reason: who.refusal },
        { ...log, decision: RevalidateDecision.Unauthorized, reason: who.refusal },
      );
    }
    caller = who.caller;
  } catch {
    return unavailable(deps, { ...log, reason: 'secret-unavailable' });
  }
  const statusOf = request.method === 'GET' ? statusTargetOf(request.target) : undefined;
  if (statusOf !== undefined) return serveStatus(deps, statusOf, { ...log, caller });
  if (request.method === 'POST' && isTagTimesTarget(request.target)) {
    return serveTagTimes(deps, request.rawBody, { ...log, caller });
  }
  if (request.method !== 'POST') {
    return reply(
      405,
      { error: 'method-not-allowed', message: 'POST a JSON body' },
      { ...log, caller, decision: RevalidateDecision.Invalid, reason: 'method-not-allowed' },
      { allow: 'POST' },
    );
  }
  try {
    const key = idempotencyKeyOf(request.headers['idempotency-key']);
    const canonical = parseRevalidateBody(request.rawBody, deps.policy);
    if (canonical.dryRun === true) return await serveDryRun(deps, canonical, { key, caller });
    return await applyOnce(deps, { key, canonical, caller });
  } catch (error) {
    if (!(error instanceof RevalidateRequestError)) throw error;
    const body =
      error.status === 413
        ? { error: 'too-large', field: error.field, limit: error.limit, message: error.message }
        : { error: 'invalid-request', field: error.field, message: error.message };
    return reply(error.status, body, {
      ...log,
      idempotency_key: request.headers['idempotency-key']?.slice(0, 300),
      caller,
      decision: RevalidateDecision.Invalid,
      reason: `${error.field}: ${error.message}`,
    });
  }
}

/** Dry runs' rate limits (`dry-run.ts`), one per deps object (a container's). */
const defaultDryRuns = new WeakMap<RevalidateServiceDeps, DryRunLimiter>();

/** A preview of the request (`dry-run.ts`): 200 with what it would do, 429 past the limit. */
async function serveDryRun(
  deps: RevalidateServiceDeps,
  canonical: CanonicalRevalidation,
  who: { key: string; caller: string },
): Promise<RevalidateReply> {
  let limiter = defaultDryRuns.get(deps);
  if (limiter === undefined) defaultDryRuns.set(deps, (limiter = new DryRunLimiter(deps.clock)));
  const log = { idempotency_key: who.key, effect_id: undefined, caller: who.caller };
  const wait = limiter.take(canonical.tenant);
  if (wait !== undefined) {
    const message = 'too many dry runs; retry later';
    const decision = RevalidateDecision.Limited;
    return reply(
      429,
      { error: 'dry-run-limit', message },
      { ...log, decision },
      {
        'retry-after': String(wait),
      },
    );
  }
  const preview = await previewRevalidation(deps.revalidation.tagIndex, canonical, deps.policy);
  return reply(200, preview, { ...log, decision: RevalidateDecision.DryRun });
}

/** Who is calling, or why they may not. @throws when the webhook key cannot be read now */
async function callerOf(
  deps: RevalidateServiceDeps,
  request: RevalidateHttpRequest,
): Promise<{ caller: string; refusal?: undefined } | { caller?: undefined; refusal: string }> {
  switch (deps.auth.kind) {
    case 'open':
      return { caller: request.principal ?? 'local' };
    case 'iam':
      return request.principal === undefined
        ? { refusal: 'no-iam-principal' }
        : { caller: request.principal };
    case 'hmac': {
      const refusal = signatureRefusal(
        {
          signature: request.headers[SIGNATURE_HEADER],
          timestamp: request.headers[TIMESTAMP_HEADER],
          method: request.method,
          target: request.target,
          idempotencyKey: request.headers['idempotency-key'],
          rawBody: request.rawBody,
        },
        await deps.auth.secret.value(),
        epochSeconds(deps.clock),
        deps.auth.skewSeconds,
      );
      return refusal === undefined ? { caller: 'webhook' } : { refusal };
    }
  }
}

/** Applies the request once per key (`runOnce`), and answers how the key's call ended. */
async function applyOnce(
  deps: RevalidateServiceDeps,
  input: {
    key: string;
    canonical: ReturnType<typeof parseRevalidateBody>;
    caller: string;
  },
): Promise<RevalidateReply> {
  const { key, canonical, caller } = input;
  const pk = revalidationPartition(canonical.tenant);
  const log = { idempotency_key: key, effect_id: undefined, caller };
  const request = requestJson(canonical);
  const { store } = deps.idempotency;
  let run: RunOnce<AnsweredOutcome>;
  try {
    run = await runOnce(deps.idempotency, { pk, key, request, lockedBy: caller }, () =>
      applyRevalidation(deps, canonical, effectIdOf(pk, key, store.heldClaim(pk, key) ?? '')),
    );
  } catch (error) {
    return unavailable(deps, { ...log, reason: errorText(error) });
  }
  switch (run.status) {
    case 'new':
      return answered(run.outcome.response, false, log);
    case 'replayed':
      return answered(storedAnswerOf(run.outcome.response), true, log);
    case 'conflict':
    case 'in-progress':
      return refuseClaimed(deps, run.status, { pk, key, request, log });
  }
}

/** The two 409s of a key another request claimed: what each says and logs. */
const CLAIM_REFUSALS = {
  conflict: {
    error: 'idempotency-key-reused',
    message: 'this Idempotency-Key was used with another request; nothing was applied',
    decision: RevalidateDecision.Conflict,
  },
  'in-progress': {
    error: 'in-progress',
    message: 'a request with this Idempotency-Key is being applied; retry later',
    decision: RevalidateDecision.InProgress,
  },
} as const;

/**
 * A 409 for a key another request claimed, with the claim's effect id (null without one): a
 * reused key also gets the diff of the two bodies, a key in progress its claim's Retry-After.
 */
async function refuseClaimed(
  deps: RevalidateServiceDeps,
  status: keyof typeof CLAIM_REFUSALS,
  at: {
    pk: string;
    key: string;
    request: ReturnType<typeof requestJson>;
    log: Omit<RevalidateLog, 'decision'>;
  },
): Promise<RevalidateReply> {
  const { store } = deps.idempotency;
  const { pk, key, request, log } = at;
  const claim = await store.claimOf(pk, key);
  const effectId = claim?.token === undefined ? undefined : effectIdOf(pk, key, claim.token);
  const { error, message, decision } = CLAIM_REFUSALS[status];
  const body = { error, message, effect_id: effectId ?? null };
  const logged = { ...log, effect_id: effectId, decision };
  if (status === 'in-progress') {
    const retryAfter = String(claimRetryAfter(deps, claim?.inProgressExpiresAtMs));
    return reply(409, body, logged, { 'retry-after': retryAfter });
  }
  const diff = requestDiff(await store.firstRequest(pk, key), request);
  return reply(409, { ...body, diff }, logged);
}

/**
 * Seconds until a claim in progress can run out: its holder may take until then (a crashed one
 * holds the key that long), so an earlier retry would only be refused again.
 */
function claimRetryAfter(deps: RevalidateServiceDeps, expiresAtMs: number | undefined): number {
  if (expiresAtMs === undefined) return deps.retryAfterSeconds;
  return Math.max(1, Math.ceil((expiresAtMs - deps.clock.now()) / 1000));
}

/** What a new key's call records: the 202 it answered, replayed as is for the same key. */
type AnsweredOutcome = RecordedOutcome & { readonly response: StoredAnswer };

/** The effect of a new request, and the answer that is stored for its replays. */
async function applyRevalidation(
  deps: RevalidateServiceDeps,
  canonical: CanonicalRevalidation,
  effectId: string,
): Promise<AnsweredOutcome> {
  const revalidation = revalidationOf(canonical, effectId, deps.policy);
  const effect =
    deps.background === undefined
      ? await revalidateNow(deps, revalidation)
      : await acceptRevalidation(
          { ...deps.revalidation, ...deps.background, statuses: deps.statuses },
          revalidation,
        );
  const body = JSON.stringify(receiptOf(canonical, effectId, effect));
  return { settlement: Settlement.Completed, decision: 'new', response: { status: 202, body } };
}

/** Every page marked before the answer, the status written before and after. */
async function revalidateNow(
  deps: RevalidateServiceDeps,
  revalidation: ReturnType<typeof revalidationOf>,
) {
  const accepted = {
    ...acceptedStatus(revalidation, deps.clock.now()),
    ...statusDeadlineOf(deps.revalidation, revalidation),
  };
  await deps.statuses.put(accepted);
  const effect = await revalidate(deps.revalidation, revalidation);
  await deps.statuses.put(doneStatus(accepted, effect, deps.clock.now()));
  return effect;
}

/** A status GET: the revalidation's status, a 404 for an unknown effect id, a 503 if unreadable. */
async function serveStatus(
  deps: RevalidateServiceDeps,
  effectId: string,
  log: Omit<RevalidateLog, 'decision' | 'effect_id'>,
): Promise<RevalidateReply> {
  const logged = { ...log, effect_id: effectId };
  let status;
  try {
    status = await deps.statuses.get(effectId);
  } catch (error) {
    return unavailable(deps, { ...logged, reason: errorText(error) });
  }
  if (status === undefined) {
    return reply(
      404,
      { error: 'not-found', message: 'no revalidation has this effect id (or it has expired)' },
      { ...logged, decision: RevalidateDecision.Status, reason: 'unknown-effect-id' },
    );
  }
  return reply(200, statusJson(status), { ...logged, decision: RevalidateDecision.Status });
}

/** A tag-times read: 200 with the times, a 4xx for a bad body, 503 if the table is unreadable. */
async function serveTagTimes(
  deps: RevalidateServiceDeps,
  rawBody: string,
  log: Omit<RevalidateLog, 'decision'>,
): Promise<RevalidateReply> {
  const logged = { ...log, decision: RevalidateDecision.TagTimes };
  if (deps.tagTimes === undefined) {
    return reply(404, { error: 'not-found', message: 'tag times are not served here' }, logged);
  }
  let request;
  try {
    request = parseTagTimesBody(rawBody, deps.policy);
  } catch (error) {
    if (!(error instanceof RevalidateRequestError)) throw error;
    const body = { error: 'invalid-request', field: error.field, message: error.message };
    return reply(error.status, body, { ...logged, decision: RevalidateDecision.Invalid });
  }
  try {
    const answer = await readTagTimes(deps.tagTimes, request);
    return reply(200, { ...answer }, { ...logged, counts: { tags: request.tags.length } });
  } catch (error) {
    return unavailable(deps, { ...log, reason: errorText(error) });
  }
}

/** The stored answer as the reply: a replay returns the stored body byte for byte. */
const answered = (
  answer: StoredAnswer,
  replayed: boolean,
  log: Omit<RevalidateLog, 'decision'>,
): RevalidateReply => ({
  status: answer.status,
  headers: { ...JSON_TYPE, ...(replayed ? { 'idempotent-replayed': 'true' } : {}) },
  body: answer.body,
  log: {
    ...log,
    decision: replayed ? RevalidateDecision.Duplicate : RevalidateDecision.New,
    effect_id: fieldOf(answer.body, 'effect_id') as string | undefined,
    counts: fieldOf(answer.body, 'counts'),
  },
});

/** The answer a REQ# row keeps. @throws when the row holds none (not one of ours) */
function storedAnswerOf(response: JsonValue | undefined): StoredAnswer {
  const answer = response as Partial<Record<string, JsonValue>> | undefined;
  if (typeof answer?.status !== 'number' || typeof answer.body !== 'string') {
    throw new Error('the stored answer of this Idempotency-Key is unreadable');
  }
  return { status: answer.status, body: answer.body };
}

/** Nothing stored: the key is free again, and the same request can be retried. */
const unavailable = (
  deps: RevalidateServiceDeps,
  log: Omit<RevalidateLog, 'decision'>,
): RevalidateReply =>
  reply(
    503,
    { error: 'unavailable', message: 'the revalidation could not be applied now; retry' },
    { ...log, decision: RevalidateDecision.Failed },
    { 'retry-after': String(deps.retryAfterSeconds) },
  );

const errorText = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/** A field of a stored answer, for the log line. */
function fieldOf(body: string, field: string): unknown {
  try {
    return (JSON.parse(body) as Record<string, unknown>)[field];
  } catch {
    return undefined;
  }
}
