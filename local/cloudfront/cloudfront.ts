/**
 * CloudFront, as the synthesized template configures it, for `npm start` and the tests: one
 * request at a time through the behaviour its path selects (`behaviours.ts`), that behaviour's
 * allowed methods, its viewer-request function (the runtime emulator), its cache policy's key
 * and TTLs (`requests.ts`, `ttl.ts`), its origin request policy, the origin (`origins.ts`) and
 * what CloudFront does to the answer (`responses.ts`). Not emulated: compression, range
 * requests, request collapsing, origin groups, custom error pages, signed URLs, geo restriction
 * and the web ACL.
 */
import { randomUUID } from 'node:crypto';
import {
  EdgeFunctionError,
  runViewerRequest,
} from '../../lib/edge/cloudfront-functions-runtime.js';
import { systemClock, type Clock } from '../../lambda/core/clock.js';
import {
  collect,
  functionAnswer,
  generatedAnswer,
  mergeHeaders,
  objectToStore,
  storedAnswer,
  type EdgeAnswer,
} from './answers.js';
import { behaviourFor } from './behaviours.js';
import type { EdgeBehaviour, EdgeConfig } from './config.js';
import { cloudFrontError, type LocalOrigin, type OriginAnswer } from './origins.js';
import { edgeCacheKeyOf, forwardedParts, type Pairs, type ViewerRequest } from './requests.js';
import {
  EdgeResult,
  headerBytes,
  headerOf,
  MAX_ORIGIN_RESPONSE_HEADER_BYTES,
  viewerHeaders,
} from './responses.js';
import { EdgeStore, type EdgeStoreOptions, type StoredAnswer } from './store.js';

export type { EdgeAnswer } from './answers.js';

export interface LocalCloudFrontOptions {
  readonly config: EdgeConfig;
  /** Each origin id of the template, and what answers for it locally. */
  readonly origins: Readonly<Record<string, LocalOrigin>>;
  readonly clock?: Pick<Clock, 'now'> | undefined;
  /** @default true: answers are kept as the cache policies say */
  readonly cache?: boolean | undefined;
  readonly store?: EdgeStoreOptions | undefined;
}

/** The viewer's body, read only when the request goes to an origin. */
export type BodyReader = () => Promise<Buffer | undefined>;

/** One request once its behaviour and function have run. */
interface Routed {
  readonly behaviour: EdgeBehaviour;
  readonly request: ViewerRequest;
  readonly originId: string;
  readonly requestId: string;
  /** Its cache key, when its method is one the behaviour caches. */
  readonly key: string | undefined;
}

const METHOD_REFUSED =
  'This distribution is not configured to allow the HTTP request method that was used for this request.';

export class LocalCloudFront {
  readonly store: EdgeStore;
  readonly #options: LocalCloudFrontOptions;
  readonly #clock: Pick<Clock, 'now'>;
  readonly #background = new Set<Promise<unknown>>();

  constructor(options: LocalCloudFrontOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.store = new EdgeStore(options.store);
  }

  get config(): EdgeConfig {
    return this.#options.config;
  }

  /** Purges as CloudFront's CreateInvalidation would (`#tag` items and paths). */
  invalidate(items: readonly string[]): number {
    return this.store.invalidate(items);
  }

  /** Resolves once the background refreshes started so far (stale-while-revalidate) are done. */
  async settled(): Promise<void> {
    while (this.#background.size > 0) await Promise.allSettled([...this.#background]);
  }

  async handle(viewer: ViewerRequest, readBody: BodyReader): Promise<EdgeAnswer> {
    const requestId = randomUUID();
    const behaviour = behaviourFor(this.#options.config.behaviours, viewer.uri);
    // "Allowed HTTP methods" (DownloadDistValuesCacheBehavior.html): other methods are refused.
    if (!behaviour.allowedMethods.includes(viewer.method)) {
      return generatedAnswer(403, METHOD_REFUSED, requestId);
    }
    const routed = this.#route(behaviour, viewer, requestId);
    if ('answer' in routed) return routed.answer;
    const { key } = routed;
    const stored = key === undefined ? undefined : this.store.get(key);
    if (stored !== undefined && !stored.freshness.alwaysForward) {
      const { ttl, staleWhileRevalidate } = stored.freshness;
      if (stored.age.fresh) return this.#fromStore(stored, routed, EdgeResult.Hit);
      if (stored.age.seconds < ttl + staleWhileRevalidate) {
        this.#refreshInBackground(routed, stored);
        return this.#fromStore(stored, routed, EdgeResult.Hit);
      }
    }
    const revalidating = stored?.freshness.alwaysForward === false ? stored : undefined;
    const answer = await this.#fetch(routed, readBody, revalidating);
    // An expired object is served while the origin fails ("HTTPStatusCodes.html").
    if (answer.status >= 500 && stored !== undefined) {
      return this.#fromStore(stored, routed, EdgeResult.Hit);
    }
    if (answer.status === 304 && stored !== undefined) {
      const headers = mergeHeaders(stored.headers, answer.headers);
      const refreshed = this.#keep(routed, { ...stored, headers });
      return this.#fromStore(refreshed ?? stored, routed, EdgeResult.RefreshHit);
    }
    return this.#deliver(answer, routed);
  }

  /** The behaviour's viewer-request function: the request as it goes on, or its own answer. */
  #route(
    behaviour: EdgeBehaviour,
    viewer: ViewerRequest,
    requestId: string,
  ): Routed | { answer: EdgeAnswer } {
    const routed = (request: ViewerRequest, originId: string): Routed => {
      const cached =
        this.#options.cache !== false && behaviour.cachedMethods.includes(request.method);
      const key = cached ? edgeCacheKeyOf(behaviour.cachePolicy, request) : undefined;
      return { behaviour, request, originId, requestId, key };
    };
    const source = behaviour.viewerRequestFunction;
    if (source === undefined) return routed(viewer, behaviour.originId);
    try {
      const result = runViewerRequest(
        source,
        { ...viewer, requestId },
        { origins: Object.keys(this.#options.config.origins) },
      );
      if ('response' in result) return { answer: functionAnswer(result.response, requestId) };
      const { uri, querystring, headers } = result.request;
      const request = { ...viewer, uri, querystring, headers };
      return routed(request, result.origin ?? behaviour.originId);
    } catch (error) {
      if (!(error instanceof EdgeFunctionError)) throw error;
      return { answer: generatedAnswer(error.status, error.message, requestId) };
    }
  }

  /**
   * The origin request: what the policies forward; for an expired object with a validator,
   * CloudFront's own conditional request in place of the viewer's.
   */
  async #fetch(
    routed: Routed,
    readBody: BodyReader,
    stored: StoredAnswer | undefined,
  ): Promise<OriginAnswer> {
    const { behaviour, request } = routed;
    const origin = this.#options.origins[routed.originId];
    if (origin === undefined) return cloudFrontError(502, `no local origin for ${routed.originId}`);
    const parts = forwardedParts(behaviour.cachePolicy, behaviour.originRequestPolicy, request);
    const conditional = (name: string) => name === 'if-none-match' || name === 'if-modified-since';
    const headers: Pairs =
      stored === undefined ? parts.headers : parts.headers.filter(([name]) => !conditional(name));
    const etag = stored === undefined ? undefined : headerOf(stored.headers, 'etag');
    const modified = stored === undefined ? undefined : headerOf(stored.headers, 'last-modified');
    if (etag !== undefined) headers.push(['if-none-match', etag]);
    else if (modified !== undefined) headers.push(['if-modified-since', modified]);
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    return origin.fetch({
      method: request.method,
      path: request.uri,
      query: parts.query,
      headers,
      cookies: parts.cookies,
      body: hasBody ? await readBody() : undefined,
      clientIp: request.clientIp,
      requestId: routed.requestId,
    });
  }

  /** The origin's answer to the viewer, kept first when the cache policy says so. */
  async #deliver(answer: OriginAnswer, routed: Routed): Promise<EdgeAnswer> {
    const { behaviour, requestId } = routed;
    if (headerBytes(answer.status, answer.headers) > MAX_ORIGIN_RESPONSE_HEADER_BYTES) {
      const message = `the origin's headers are over ${MAX_ORIGIN_RESPONSE_HEADER_BYTES} bytes`;
      return generatedAnswer(502, message, requestId);
    }
    const generated = answer.generated === true;
    const result = generated || answer.status >= 400 ? EdgeResult.Error : EdgeResult.Miss;
    const headers = viewerHeaders(answer.headers, { behaviour, result, requestId });
    if (routed.key === undefined || routed.request.method !== 'GET' || generated) {
      return { status: answer.status, headers, body: answer.body, result };
    }
    // What it will not keep (a pass's private answer) goes on as it comes: CloudFront streams
    // an origin's answer to the viewer, and whether it keeps one is the status's and headers'.
    if (!this.#keeps(routed, answer)) {
      this.store.delete(routed.key);
      return { status: answer.status, headers, body: answer.body, result };
    }
    const body = await collect(answer.body);
    this.#keep(routed, { status: answer.status, headers: answer.headers, body });
    return { status: answer.status, headers, body: [body], result };
  }

  /** Whether the answer would be stored: its status and headers decide, never its body. */
  #keeps(routed: Routed, answer: OriginAnswer): boolean {
    const at = { key: routed.key ?? '', path: routed.request.uri };
    const probe = { status: answer.status, headers: answer.headers, body: Buffer.alloc(0) };
    return (
      objectToStore(this.#options.config, routed.behaviour, at, probe, this.#clock) !== undefined
    );
  }

  /** Stores an answer under the request's key when CloudFront would; returns what was stored. */
  #keep(
    routed: Routed,
    answer: { readonly status: number; readonly headers: Pairs; readonly body: Buffer },
  ): StoredAnswer | undefined {
    if (routed.key === undefined) return undefined;
    const at = { key: routed.key, path: routed.request.uri };
    const object = objectToStore(this.#options.config, routed.behaviour, at, answer, this.#clock);
    if (object === undefined) this.store.delete(routed.key);
    else this.store.put(object);
    return object;
  }

  #fromStore(stored: StoredAnswer, routed: Routed, result: EdgeResult): EdgeAnswer {
    return storedAnswer(stored, routed.behaviour, routed.request, result, routed.requestId);
  }

  /** stale-while-revalidate: the stale object now, the origin asked behind it. */
  #refreshInBackground(routed: Routed, stored: StoredAnswer): void {
    const refresh = (async () => {
      const again = { ...routed, requestId: randomUUID() };
      const answer = await this.#fetch(again, () => Promise.resolve(undefined), stored);
      if (answer.status === 304) {
        this.#keep(again, { ...stored, headers: mergeHeaders(stored.headers, answer.headers) });
      } else if (answer.status < 500 && answer.generated !== true) {
        const body = await collect(answer.body);
        this.#keep(again, { status: answer.status, headers: answer.headers, body });
      }
    })();
    this.#background.add(refresh);
    void refresh.finally(() => this.#background.delete(refresh)).catch(() => undefined);
  }
}
