/**
 * Pass-through: the viewer's own request to the upstream, its answer back untouched (status,
 * Set-Cookie, Location, Content-Encoding, body bytes), nothing stored. For what the cache must not
 * answer: other methods, and answers the upstream marks per viewer (`traffic.ts`).
 */
import { tenantFor, type Tenancy } from '../page/cache-key.js';
import type { Clock } from '../clock.js';
import { InvalidCacheKeyError, PassFailure, PassThroughError } from '../errors.js';
import { forwardedAnswerHeaders, type HeaderPairs } from '../forwarding.js';
import { privateCacheControl } from '../pass-privacy.js';
import { withoutInternalHeaders, type InternalHeaders } from '../response-headers.js';
import type { RenderResult } from '../page/model.js';
import type { PassAnswer, PassThrough } from './ports.js';
import {
  cacheStatusHeader,
  errorResponse,
  jsonError,
  PASS,
  type PageResponse,
} from './responses.js';

/**
 * The largest pass answer read whole (`streamPasses` off: HEAD requests and the core's own
 * tests): a buffered function URL's 6 MB, less base64's growth. The deployed origin streams.
 */
export const MAX_PASS_ANSWER_BYTES = 4_400_000;

export interface PassDeps {
  readonly passThrough?: PassThrough | undefined;
  /**
   * Multi-tenant mode: the tenant header, and the tenants served. A pass carries the tenant as
   * validated (a request without a valid one is refused, as for a page), never the viewer's copy.
   */
  readonly tenancy?: ({ readonly header: string } & Tenancy) | undefined;
  /**
   * Answer headers only the service reads (the upstream's tag header, CloudFront's cache tag
   * header): never sent on to a viewer, whatever the answer. @default none
   */
  readonly internalAnswerHeaders?: InternalHeaders | undefined;
  /** How long the upstream has to answer a pass-through, body included. */
  readonly passTimeoutMs: number;
  /**
   * The answer streams to the viewer as the upstream sends it (`PageResponse.stream`), its
   * headers decided from the upstream's first: the origin behind a RESPONSE_STREAM function URL.
   * @default false: read whole within what a buffered function URL returns (the deployed
   * origin, `createStreamingOriginHandler`, sets it)
   */
  readonly streamPasses?: boolean | undefined;
  readonly clock: Clock;
}

/** The viewer's request as a pass-through needs it: only ever used for pass, never a render. */
export interface ViewerRequest {
  readonly method: string;
  /** The tenant header's value as received; read in multi-tenant mode only. */
  readonly tenant?: string | undefined;
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
  const headers = passHeaders(deps, request);
  if (headers instanceof InvalidCacheKeyError) {
    return errorResponse(400, headers.reason, headers.message);
  }
  const timeout = new AbortController();
  const done = new AbortController();
  void deps.clock.sleep(deps.passTimeoutMs, done.signal).then(() => {
    if (!done.signal.aborted) timeout.abort();
  });
  let streaming = false;
  try {
    const answer = await passThrough.forward({
      method: request.method,
      path: request.rawPath,
      query: request.rawQueryString,
      headers,
      body: request.body,
      signal: timeout.signal,
    });
    const shown = {
      ...answer,
      headers: withoutInternalHeaders(answer.headers, deps.internalAnswerHeaders),
    };
    if (deps.streamPasses === true && request.method !== 'HEAD') {
      // Headers now, the body as it comes; the timeout still bounds the whole answer.
      streaming = true;
      const stream = guardedBody(answer, timeout.signal, () => done.abort());
      return { ...passResponse(shown, undefined, why), stream };
    }
    const body = await readAnswer(answer, timeout.signal);
    return passResponse(shown, request.method === 'HEAD' ? undefined : body, why);
  } catch (caught) {
    const error = timeout.signal.aborted ? timedOut(caught) : caught;
    if (!(error instanceof PassThroughError)) throw error;
    return {
      ...jsonError(error.failure.status, error.code, error.message),
      decision: `pass:${error.code}`,
      detail: { pass: why.detail, error },
    };
  } finally {
    if (!streaming) done.abort();
  }
}

/**
 * The viewer's headers as the pass sends them: in multi-tenant mode the tenant header is the
 * validated tenant, set by the service (a viewer's copy never goes on as it came).
 */
function passHeaders(deps: PassDeps, request: ViewerRequest): HeaderPairs | InvalidCacheKeyError {
  const headers = request.headers ?? [];
  const tenancy = deps.tenancy;
  if (tenancy === undefined) return headers;
  try {
    const tenant = tenantFor(tenancy, request.tenant) ?? '';
    const name = tenancy.header.toLowerCase();
    return [...headers.filter(([header]) => header.toLowerCase() !== name), [name, tenant]];
  } catch (error) {
    if (error instanceof InvalidCacheKeyError) return error;
    throw error;
  }
}

/** Whatever an adapter threw once the pass timeout fired: the timeout. */
const timedOut = (cause: unknown) =>
  new PassThroughError(PassFailure.Timeout, 'the upstream did not answer in time', { cause });

/**
 * The answer's body as it comes, for a streamed pass: its status and headers are gone already,
 * so a failure breaks the body off (the function's stream ends in error) as a PassThroughError;
 * `finished` runs however it ends. No size bound but Lambda's own (200 MB streamed:
 * https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html).
 */
async function* guardedBody(
  answer: PassAnswer,
  signal: AbortSignal,
  finished: () => void,
): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of answer.body) yield chunk;
  } catch (error) {
    const failure = signal.aborted ? PassFailure.Timeout : PassFailure.Unreachable;
    throw new PassThroughError(failure, 'the upstream broke off its answer', { cause: error });
  } finally {
    finished();
  }
}

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
  // Made with this viewer's request: no shared cache on the way may keep it (pass-privacy.ts).
  headers['cache-control'] = privateCacheControl(headers['cache-control'], answer.status);
  if (answer.status >= 400) delete headers.expires;
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

/**
 * Headers of a render's answer a viewer never gets as they came: the body was decoded by the
 * renderer's fetch (its encoding and length no longer hold), and the absolute `Location` is
 * replaced by the renderer's relative one.
 */
const RENDER_ANSWER_DROPPED = new Set(['content-encoding', 'content-length', 'location']);

/**
 * Issue 31, fix 11 (Varnish's miss that turns hit-for-pass): the answer of a render refused for
 * storage, delivered to the viewer whose request the render was, instead of a second trip to
 * the upstream. Only when the viewer's request carried nothing the render's did not
 * (`isRenderOwnRequest`), the answer was read whole and fits what a pass returns, and it does
 * not vary on everything (`Vary: *`). It goes out as a pass does: private, never shared.
 */
export function deliverableRender(
  deps: Pick<PassDeps, 'internalAnswerHeaders'>,
  rendered: { readonly answer: RenderResult | undefined; readonly key: RenderedKey },
  request: ViewerRequest,
  why: PassWhy,
): PageResponse | undefined {
  const { answer, key } = rendered;
  if (answer === undefined || !isRenderOwnRequest(request, key)) return undefined;
  if (answer.body.byteLength > MAX_PASS_ANSWER_BYTES) return undefined;
  const vary = (answer.headers?.vary ?? '').split(',').map((name) => name.trim());
  if (vary.includes('*')) return undefined;
  const headers = withoutInternalHeaders(
    forwardedAnswerHeaders(Object.entries(answer.headers ?? {})),
    deps.internalAnswerHeaders,
  ).filter(([name]) => !RENDER_ANSWER_DROPPED.has(name));
  headers.push(['content-type', answer.contentType]);
  if (answer.location !== undefined) headers.push(['location', answer.location]);
  for (const cookie of answer.setCookies ?? []) headers.push(['set-cookie', cookie]);
  const unique = headers.filter(
    ([name], at) => name === 'set-cookie' || headers.findIndex(([n]) => n === name) === at,
  );
  const response = passResponse(
    { status: answer.status, headers: unique, body: [] },
    request.method === 'HEAD' ? undefined : answer.body,
    why,
  );
  return { ...response, detail: { ...response.detail, delivered: 'render' } };
}

/** What a render asked the upstream for: the cache key's path and query (a variant adds its own). */
export interface RenderedKey {
  readonly path: string;
  readonly query: string;
  readonly variant?: string | undefined;
}

/**
 * Whether a render (GET of the cache key's path and query, no viewer header) asked what the
 * viewer's request asks: a GET or HEAD of that very path and those parameters (not a variant,
 * whose render makes up its own query), with no cookie and no credential. A SigV4
 * `Authorization` is CloudFront's origin access control signing its own request (it replaces
 * any the viewer sent: signing behaviour 'always', https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-restricting-access-to-lambda.html),
 * not the viewer's credential; any other is the viewer's.
 */
export function isRenderOwnRequest(request: ViewerRequest, key: RenderedKey): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (key.variant !== undefined && key.variant !== '') return false;
  if (request.rawPath !== key.path) return false;
  if (sortedParams(request.rawQueryString) !== sortedParams(key.query)) return false;
  return !(request.headers ?? []).some(([name, value]) => {
    const header = name.toLowerCase();
    if (header === 'cookie') return value.trim() !== '';
    return header === 'authorization' && !value.startsWith('AWS4-HMAC-SHA256 ');
  });
}

/** A query's parameters, decoded and sorted by name then value, as one comparable string. */
const sortedParams = (query: string): string =>
  JSON.stringify(
    [...new URLSearchParams(query)].sort(([a, x], [b, y]) =>
      a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1,
    ),
  );
