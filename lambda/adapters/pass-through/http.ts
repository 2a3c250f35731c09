/**
 * Pass-through over node:http(s): the viewer's request to the upstream, the upstream's answer
 * back, both streamed and never decoded (fetch would undo Content-Encoding). The caller aborts
 * through `signal` (its pass timeout); the request body is cut at the limit with a 413.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PassFailure, PassThroughError } from '../../core/errors.js';
import {
  forwardedAnswerHeaders,
  forwardedRequestHeaders,
  upstreamRelativeLocation,
  type PublicOrigin,
} from '../../core/forwarding.js';
import type { PassAnswer, PassRequest, PassThrough } from '../../core/serve/ports.js';
import type { SecretSource } from '../../core/page/ports.js';

export interface HttpPassThroughOptions {
  /** The upstream, e.g. `http://ssr.internal:8080/app`. Only ever this host is reached. */
  readonly originUrl: string;
  /** Largest request body forwarded; past it the viewer gets a 413. */
  readonly maxBodyBytes: number;
  /** The shared secret the upstream checks, sent in this header (the viewer's is dropped). */
  readonly secretHeader?: { readonly name: string; readonly secret: SecretSource } | undefined;
  /**
   * The viewers' host and scheme (`publicOrigin`), sent in X-Forwarded-Host/-Proto. Unset, the
   * X-Forwarded-Host the edge set from the viewer's Host goes on (the edge's function replaces
   * any a viewer sends) and no X-Forwarded-Proto does.
   */
  readonly publicOrigin?: PublicOrigin | undefined;
  /**
   * Multi-tenant mode: the tenant header (its value the validated tenant, set by `servePass`)
   * and each tenant's origin. The tenant's replaces any forwarded host; a tenant without one
   * gets none, so neither a viewer's nor another tenant's ever goes on.
   */
  readonly tenantOrigins?:
    { readonly header: string; readonly origins: ReadonlyMap<string, PublicOrigin> } | undefined;
}

export class HttpPassThrough implements PassThrough {
  readonly #origin: URL;
  readonly #options: HttpPassThroughOptions;

  constructor(options: HttpPassThroughOptions) {
    this.#origin = new URL(options.originUrl);
    if (this.#origin.protocol !== 'http:' && this.#origin.protocol !== 'https:') {
      throw new Error(`pass-through origin must be http(s): ${options.originUrl}`);
    }
    this.#options = options;
  }

  async forward(request: PassRequest): Promise<PassAnswer> {
    const { body } = request;
    if (body instanceof Uint8Array && body.byteLength > this.#options.maxBodyBytes) {
      throw tooLarge(this.#options.maxBodyBytes);
    }
    const url = new URL(this.#origin);
    url.pathname = `${this.#origin.pathname.replace(/\/$/, '')}${request.path}`;
    url.search = request.query;
    const headers = await this.#headers(request, url);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<PassAnswer>((resolve, reject) => {
      const outgoing = send(url, { method: request.method, headers, signal: request.signal });
      outgoing.on('response', (incoming: IncomingMessage) =>
        resolve(answerOf(incoming, this.#origin)),
      );
      outgoing.on('error', (error) => reject(failureOf(error, request.signal)));
      writeBody(outgoing, body, this.#options.maxBodyBytes).catch((error: unknown) => {
        outgoing.destroy();
        reject(error instanceof PassThroughError ? error : failureOf(error, request.signal));
      });
    });
  }

  /** The viewer's headers, filtered, with the upstream's Host and our secret. */
  async #headers(request: PassRequest, url: URL): Promise<Record<string, string | string[]>> {
    const secret = this.#options.secretHeader;
    const internal = secret ? [secret.name] : [];
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of forwardedRequestHeaders(request.headers, internal)) {
      const previous = headers[name];
      headers[name] = previous === undefined ? value : [previous, value].flat();
    }
    headers.host = url.host;
    // Where the viewer was: the service's word, never a viewer's X-Forwarded-Proto.
    delete headers['x-forwarded-proto'];
    const tenancy = this.#options.tenantOrigins;
    if (tenancy !== undefined) delete headers['x-forwarded-host'];
    const publicOrigin =
      tenancy === undefined ? this.#options.publicOrigin : tenantOriginOf(headers, tenancy);
    if (publicOrigin !== undefined) {
      headers['x-forwarded-host'] = publicOrigin.host;
      headers['x-forwarded-proto'] = publicOrigin.proto;
    }
    if (secret !== undefined) {
      try {
        headers[secret.name.toLowerCase()] = await secret.secret.value();
      } catch (error) {
        throw new PassThroughError(
          PassFailure.Unreachable,
          'the upstream secret is not available',
          {
            cause: error,
          },
        );
      }
    }
    return headers;
  }
}

/** The origin of the pass's tenant: its header's one value, as the service set it. */
const tenantOriginOf = (
  headers: Record<string, string | string[]>,
  tenancy: NonNullable<HttpPassThroughOptions['tenantOrigins']>,
): PublicOrigin | undefined => {
  const tenant = headers[tenancy.header.toLowerCase()];
  return typeof tenant === 'string' ? tenancy.origins.get(tenant) : undefined;
};

/**
 * The answer as it came: raw header pairs (Set-Cookie repeated), the socket's bytes; only a
 * `Location` naming the upstream's own host is made relative (`upstreamRelativeLocation`).
 */
const answerOf = (incoming: IncomingMessage, upstream: URL): PassAnswer => {
  const pairs: [string, string][] = [];
  for (let at = 0; at + 1 < incoming.rawHeaders.length; at += 2) {
    const name = incoming.rawHeaders[at];
    const value = incoming.rawHeaders[at + 1];
    const located = name.toLowerCase() === 'location';
    pairs.push([name, located ? upstreamRelativeLocation(value, upstream) : value]);
  }
  return {
    status: incoming.statusCode ?? 502,
    headers: forwardedAnswerHeaders(pairs),
    body: incoming as AsyncIterable<Uint8Array>,
  };
};

/** Writes the body, counting bytes of a stream: past `maxBytes`, a 413 and the request cut. */
async function writeBody(
  outgoing: ReturnType<typeof httpRequest>,
  body: PassRequest['body'],
  maxBytes: number,
): Promise<void> {
  if (body === undefined || body instanceof Uint8Array) {
    outgoing.end(body);
    return;
  }
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    if (!outgoing.write(chunk)) await new Promise((resolve) => outgoing.once('drain', resolve));
  }
  outgoing.end();
}

const tooLarge = (maxBytes: number) =>
  new PassThroughError(
    PassFailure.BodyTooLarge,
    `the request body is over the ${maxBytes}-byte pass-through limit`,
  );

/** An aborted request is the caller's timeout; anything else, an unreachable upstream. */
const failureOf = (error: unknown, signal: AbortSignal | undefined): PassThroughError =>
  signal?.aborted === true
    ? new PassThroughError(PassFailure.Timeout, 'the upstream did not answer in time', {
        cause: error,
      })
    : new PassThroughError(PassFailure.Unreachable, 'the upstream could not be reached', {
        cause: error,
      });
