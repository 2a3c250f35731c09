/**
 * Sends a revalidation to the service's endpoint: signed as configured, with one
 * Idempotency-Key per call that every retry of the call reuses, so a retry after a lost answer
 * replays the first effect instead of applying a second one. Retries are bounded, with jittered
 * exponential backoff, and honour Retry-After; a refusal (400, 401, 403, 409 conflict, 413) is
 * final. Time and randomness come in as dependencies, so tests never wait.
 */
import { requestTargetOf, signedHeadersOf } from '../lambda/core/revalidate/webhook-signature.js';
import type { AdapterConfig } from './config.js';
import type { RevalidationBody } from './revalidations.js';
import type { RequestSigner } from './sigv4.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** One attempt's time limit (the endpoint's 202 comes once every page is marked). */
  readonly timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  timeoutMs: 30_000,
};

/** One JSON log line; never given a viewer's headers or cookies. */
export type AdapterLog = (
  level: 'info' | 'warn' | 'error',
  fields: Record<string, unknown>,
) => void;

export interface ClientDeps {
  readonly config: AdapterConfig;
  readonly fetch: typeof fetch;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly now: () => Date;
  /** The SigV4 signer when the endpoint takes AWS_IAM auth. */
  readonly sign: RequestSigner | undefined;
  readonly log: AdapterLog;
  readonly retry: RetryPolicy;
}

/** The endpoint's answer to an accepted revalidation. */
export interface Receipt {
  readonly status: number;
  readonly replayed: boolean;
  readonly body: unknown;
}

/** A revalidation the service did not accept: the app's action or route fails with it. */
export class RevalidationFailedError extends Error {
  override readonly name = 'RevalidationFailedError';
  constructor(
    readonly idempotencyKey: string,
    readonly status: number | undefined,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `facetheory-isr/next: revalidation ${idempotencyKey} failed (${status ?? 'no answer'}): ${reason}`,
      options,
    );
  }
}

type Attempt =
  | { readonly done: true; readonly receipt: Receipt }
  | {
      readonly done: false;
      readonly retry: boolean;
      readonly status?: number;
      readonly reason: string;
      readonly retryAfterMs?: number;
      readonly cause?: unknown;
    };

/**
 * The headers of a POST of `body` to `url` (the endpoint, or a read under it), signed as the
 * endpoint is configured: HMAC over the service's signed string, SigV4, or none on loopback.
 */
export async function signedHeadersFor(
  deps: Pick<ClientDeps, 'config' | 'now' | 'sign'>,
  request: { readonly url: URL; readonly key: string | undefined; readonly body: string },
): Promise<Record<string, string>> {
  const { url, key, body } = request;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(key === undefined ? {} : { 'idempotency-key': key }),
  };
  const { auth } = deps.config;
  const now = deps.now();
  if (auth.kind === 'hmac') {
    Object.assign(
      headers,
      signedHeadersOf(auth.secret, {
        method: 'POST',
        target: requestTargetOf(url),
        idempotencyKey: key,
        rawBody: body,
        nowSeconds: now.getTime() / 1000,
      }),
    );
  }
  if (auth.kind === 'sigv4' && deps.sign !== undefined) {
    return deps.sign({ method: 'POST', url, headers, body }, now);
  }
  return headers;
}

const isRetryableStatus = (status: number): boolean =>
  status === 408 || status === 425 || status === 429 || status >= 500;

function retryAfterMsOf(response: Response): number | undefined {
  const seconds = Number(response.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

/** What an answer means: accepted, worth another attempt, or refused for good. */
async function outcomeOf(response: Response): Promise<Attempt> {
  const text = await response.text().catch(() => '');
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  if (response.ok) {
    const replayed = response.headers.get('idempotent-replayed') === 'true';
    return { done: true, receipt: { status: response.status, replayed, body: parsed } };
  }
  const error = (parsed ?? {}) as { error?: unknown; reason?: unknown; message?: unknown };
  const reason =
    [error.error, error.reason ?? error.message]
      .filter((part) => typeof part === 'string')
      .join(': ') || text.slice(0, 200);
  const inProgress = response.status === 409 && error.error === 'in-progress';
  const retryAfterMs = retryAfterMsOf(response);
  return {
    done: false,
    retry: inProgress || isRetryableStatus(response.status),
    status: response.status,
    reason,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/** One attempt, signed afresh; a network error or a timeout is worth another. */
async function attempt(deps: ClientDeps, key: string, body: string): Promise<Attempt> {
  let response: Response;
  try {
    const headers = await signedHeadersFor(deps, { url: deps.config.url, key, body });
    delete headers.host; // fetch sets Host itself (and refuses one given)
    response = await deps.fetch(deps.config.url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(deps.retry.timeoutMs),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { done: false, retry: true, reason, cause: error };
  }
  return outcomeOf(response);
}

/** Full jitter over an exponential step, never shorter than the server's Retry-After. */
function delayOf(deps: ClientDeps, failures: number, retryAfterMs: number | undefined): number {
  const step = Math.min(deps.retry.maxDelayMs, deps.retry.baseDelayMs * 2 ** (failures - 1));
  const jittered = step / 2 + (deps.random() * step) / 2;
  return Math.min(deps.retry.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
}

/** Sends one body under `key` until it is accepted or refused. @throws RevalidationFailedError */
export async function sendRevalidation(
  deps: ClientDeps,
  body: RevalidationBody,
  key: string,
): Promise<Receipt> {
  const text = JSON.stringify(body);
  const summary = {
    idempotency_key: key,
    mode: body.mode,
    paths: body.paths?.length ?? 0,
    tags: body.tags?.length ?? 0,
  };
  for (let failures = 1; ; failures++) {
    const result = await attempt(deps, key, text);
    if (result.done) {
      const receipt = result.receipt.body as { effect_id?: unknown; counts?: unknown } | undefined;
      deps.log('info', {
        message: 'revalidation accepted',
        ...summary,
        status: result.receipt.status,
        replayed: result.receipt.replayed,
        effect_id: receipt?.effect_id,
        counts: receipt?.counts,
        attempts: failures,
      });
      return result.receipt;
    }
    if (!result.retry || failures >= deps.retry.attempts) {
      deps.log('error', {
        message: 'revalidation failed',
        ...summary,
        status: result.status,
        reason: result.reason,
        attempts: failures,
      });
      throw new RevalidationFailedError(key, result.status, result.reason, { cause: result.cause });
    }
    const delayMs = delayOf(deps, failures, result.retryAfterMs);
    deps.log('warn', {
      message: 'revalidation retried',
      ...summary,
      status: result.status,
      reason: result.reason,
      attempt: failures,
      delay_ms: Math.round(delayMs),
    });
    await deps.sleep(delayMs);
  }
}
