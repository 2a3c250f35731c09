/**
 * Pass-through: the viewer's own request to the upstream, its answer back untouched (status,
 * Set-Cookie, Location, Content-Encoding, body bytes), nothing stored. For what the cache must not
 * answer: other methods, and answers the upstream marks per viewer (`traffic.ts`).
 */
import type { Clock } from '../clock.js';
import { PassFailure, PassThroughError } from '../errors.js';
import type { HeaderPairs } from '../forwarding.js';
import type { PassAnswer, PassThrough } from './ports.js';
import { cacheStatusHeader, jsonError, PASS, type PageResponse } from './responses.js';

/** The largest answer a buffered function URL returns (6 MB), less base64's growth. */
export const MAX_PASS_ANSWER_BYTES = 4_400_000;

export interface PassDeps {
  readonly passThrough?: PassThrough | undefined;
  /** How long the upstream has to answer a pass-through, body included. */
  readonly passTimeoutMs: number;
  readonly clock: Clock;
}

/** The viewer's request as a pass-through needs it: only ever used for pass, never a render. */
export interface ViewerRequest {
  readonly method: string;
  readonly rawPath: string;
  readonly rawQueryString: string;
  /** As received (lower-case names, repeated as several entries); filtered on the way out. */
  readonly headers?: HeaderPairs | undefined;
  readonly body?: Uint8Array | undefined;
}

/** Why a request was passed: RFC 9211 `fwd=` and `detail=`. */
export interface PassWhy {
  readonly fwd: 'method' | 'request' | 'bypass';
  readonly detail: string;
}

/**
 * Forwards the viewer's request under the pass timeout; a pass-through failure is a 413, 502 or
 * 504 with its reason, never retried (the request may not be idempotent).
 */
export async function servePass(
  deps: PassDeps,
  passThrough: PassThrough,
  request: ViewerRequest,
  why: PassWhy,
): Promise<PageResponse> {
  const timeout = new AbortController();
  const done = new AbortController();
  void deps.clock.sleep(deps.passTimeoutMs, done.signal).then(() => {
    if (!done.signal.aborted) timeout.abort();
  });
  try {
    const answer = await passThrough.forward({
      method: request.method,
      path: request.rawPath,
      query: request.rawQueryString,
      headers: request.headers ?? [],
      body: request.body,
      signal: timeout.signal,
    });
    const body = await readAnswer(answer, timeout.signal);
    return passResponse(answer, request.method === 'HEAD' ? undefined : body, why);
  } catch (caught) {
    const error = timeout.signal.aborted ? timedOut(caught) : caught;
    if (!(error instanceof PassThroughError)) throw error;
    return {
      ...jsonError(error.failure.status, error.code, error.message),
      decision: `pass:${error.code}`,
      detail: { pass: why.detail, error },
    };
  } finally {
    done.abort();
  }
}

/** Whatever an adapter threw once the pass timeout fired: the timeout. */
const timedOut = (cause: unknown) =>
  new PassThroughError(PassFailure.Timeout, 'the upstream did not answer in time', { cause });

/** The answer's body, whole (a function URL buffers it), bounded by size and the timeout. */
async function readAnswer(answer: PassAnswer, signal: AbortSignal): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of answer.body) {
      size += chunk.byteLength;
      if (size > MAX_PASS_ANSWER_BYTES) {
        throw new PassThroughError(
          PassFailure.AnswerTooLarge,
          `the upstream's answer is over ${MAX_PASS_ANSWER_BYTES} bytes`,
        );
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof PassThroughError) throw error;
    const failure = signal.aborted ? PassFailure.Timeout : PassFailure.Unreachable;
    throw new PassThroughError(failure, 'the upstream broke off its answer', { cause: error });
  }
  return Buffer.concat(chunks);
}

/** The upstream's headers as they came (Set-Cookie kept apart: one per cookie), and ours. */
function passResponse(
  answer: PassAnswer,
  body: Uint8Array | undefined,
  why: PassWhy,
): PageResponse {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of answer.headers) {
    if (name === 'set-cookie') cookies.push(value);
    else headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  headers['x-isr-cache'] = PASS;
  headers['cache-status'] = cacheStatusHeader({ fwd: why.fwd, detail: why.detail });
  return {
    status: answer.status,
    headers,
    cookies,
    body,
    decision: `pass:${why.detail}`,
    cacheStatus: PASS,
    cacheKeyHash: undefined,
    detail: { pass: why.detail },
  };
}
