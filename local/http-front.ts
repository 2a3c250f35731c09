/**
 * The local stand-in for CloudFront in front of the origin's function URL: an HTTP server that
 * runs the generated viewer-request function on each request (`edge`) and goes where it routes:
 * the upstream directly (pass, static), or the origin as a function URL event with what the CDK
 * origin request policy forwards (with an upstream: all but Host, cookies included, for a
 * pass-through; without: the tenant header, plus the conditional headers CloudFront sends when it
 * revalidates). The viewer's Host never reaches the origin. `POST /_isr/revalidate` goes to the
 * revalidate function instead, with its raw body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv6, type AddressInfo } from 'node:net';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import {
  EdgeFunctionError,
  runViewerRequest,
  type EdgeRequest,
} from '../lib/edge/cloudfront-functions-runtime.js';
import { UPSTREAM_ORIGIN_ID } from '../lib/edge/viewer-request-function.js';
import type { PassThrough } from '../lambda/core/serve/ports.js';
import { MAX_REVALIDATE_BODY_BYTES } from '../lambda/core/revalidate/request.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../lambda/core/revalidate/webhook-signature.js';
import type { FunctionUrlResult } from '../lambda/origin/handler.js';
import { LOOPBACK } from './backends/backend.js';
import { functionUrlEvent } from './function-url.js';
import { pairsOf, proxyToUpstream } from './upstream-proxy.js';
import { lambdaContext } from './worker-poller.js';

export type OriginHandler = (
  event: LambdaFunctionURLEvent,
  context: Context,
) => Promise<FunctionUrlResult>;

/** Where `npm start` serves the revalidate function (its own function URL when deployed). */
export const REVALIDATE_PATH = '/_isr/revalidate';

/** The endpoint itself, or a revalidation's status under it (`/_isr/revalidate/<effect_id>`). */
const isRevalidatePath = (path: string): boolean =>
  path === REVALIDATE_PATH || path.startsWith(`${REVALIDATE_PATH}/`);

/** Headers a revalidation request needs: its key, its signature, and what the body is. */
const REVALIDATE_HEADERS = ['content-type', 'idempotency-key', SIGNATURE_HEADER, TIMESTAMP_HEADER];

export interface HttpFrontOptions {
  readonly handler: OriginHandler;
  /**
   * Served at `REVALIDATE_PATH` (and the status paths under it) with the raw body and the headers it needs.
   * @default - the path goes to the origin like any other
   */
  readonly revalidateHandler?: OriginHandler | undefined;
  /** 0 picks a free port. */
  readonly port: number;
  /** Where to listen. @default 127.0.0.1, so nothing on the LAN reaches the local service */
  readonly host?: string;
  /** Lower-case tenant header to forward, in multi-tenant mode. */
  readonly tenantHeader: string | undefined;
  /** Headers that select a page's variant (`variantHeaders`), forwarded as CloudFront does. */
  readonly variantHeaders?: readonly string[] | undefined;
  /** The origin function's timeout, as its context reports it. */
  readonly functionTimeoutMs: number;
  readonly onError: (error: unknown) => void;
  /** How long an idle keep-alive connection is kept open. @default Node's (5 s) */
  readonly keepAliveTimeoutMs?: number | undefined;
  /**
   * CloudFront's viewer-request function (`viewerRequestFunctionSource`), run on every request,
   * and the upstream origin it may select (absent without an upstream: the demo).
   * @default - no function: every request goes to the origin
   */
  readonly edge?:
    { readonly source: string | undefined; readonly upstream: PassThrough | undefined } | undefined;
}

/** The largest request body a function URL takes (6 MB, base64 included). */
const MAX_FUNCTION_URL_BODY_BYTES = 4_500_000;

const CONDITIONAL_HEADERS = ['if-none-match', 'if-modified-since'];

/** Statuses that never carry a body, so no length is derived for them. */
const BODYLESS_STATUSES = new Set([204, 304]);

export interface HttpFront {
  readonly url: string;
  /**
   * Stops accepting requests and waits for those in flight. Resolves with the ones that failed
   * meanwhile (a 5xx or a handler error), each as `GET /path answered 503`.
   */
  close(): Promise<readonly string[]>;
}

export async function startHttpFront(options: HttpFrontOptions): Promise<HttpFront> {
  const forwarded = [
    ...CONDITIONAL_HEADERS,
    ...(options.tenantHeader === undefined ? [] : [options.tenantHeader]),
    ...(options.variantHeaders ?? []),
  ];
  const inFlight = new Set<Promise<void>>();
  const failedWhileClosing: string[] = [];
  let closing = false;

  const server: Server = createServer((req, res) => {
    const done = serve(req, res)
      .catch((error: unknown) => {
        options.onError(error);
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('origin failed');
      })
      .finally(() => {
        inFlight.delete(done);
        if (closing && res.statusCode >= 500)
          failedWhileClosing.push(`${req.method} ${req.url} answered ${res.statusCode}`);
      });
    inFlight.add(done);
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (options.revalidateHandler !== undefined && isRevalidatePath(pathOf(req.url))) {
      const request = { method: req.method ?? 'GET', target: req.url ?? '/', headers: {} };
      const headers = picked(req, REVALIDATE_HEADERS);
      const result = await options.revalidateHandler(
        { ...functionUrlEvent({ ...request, headers }), body: await rawBodyOf(req) },
        lambdaContext(options.functionTimeoutMs, 'isr-revalidate'),
      );
      return send(req, res, result);
    }
    const routed = routeAtEdge(req);
    if ('response' in routed) {
      res.writeHead(routed.response.status, routed.response.headers);
      res.end(routed.response.body);
      return;
    }
    const upstream = options.edge?.upstream;
    if (routed.origin === UPSTREAM_ORIGIN_ID && upstream !== undefined) {
      await proxyToUpstream(upstream, routed.request, req, res);
      return;
    }
    const event = await originEvent(routed.request, req);
    if (event === undefined) {
      res.writeHead(413, { 'content-type': 'text/plain' });
      res.end('request body too large for the origin function');
      return;
    }
    const result = await options.handler(
      event,
      lambdaContext(options.functionTimeoutMs, 'isr-origin'),
    );
    return send(req, res, result);
  }

  /** The viewer-request function's decision, as CloudFront makes it (503/502 when it fails). */
  function routeAtEdge(
    req: IncomingMessage,
  ): { request: EdgeRequest; origin?: string | undefined } | { response: EdgeResponseLike } {
    const request: EdgeRequest = {
      method: req.method ?? 'GET',
      uri: pathOf(req.url),
      querystring: queryOf(req.url),
      headers: req.headers,
    };
    const source = options.edge?.source;
    if (source === undefined) return { request };
    try {
      return runViewerRequest(source, request, { origins: [UPSTREAM_ORIGIN_ID] });
    } catch (error) {
      if (!(error instanceof EdgeFunctionError)) throw error;
      options.onError(error);
      const body = Buffer.from(error.message);
      return {
        response: { status: error.status, headers: { 'content-type': 'text/plain' }, body },
      };
    }
  }

  /**
   * The origin's function URL event: with an upstream, all the viewer sent but Host (cookies
   * listed apart, the body base64); without, the allow-listed headers only.
   */
  async function originEvent(
    routed: EdgeRequest,
    req: IncomingMessage,
  ): Promise<LambdaFunctionURLEvent | undefined> {
    const target = routed.querystring === '' ? routed.uri : `${routed.uri}?${routed.querystring}`;
    const method = req.method ?? 'GET';
    if (options.edge?.upstream === undefined) {
      return functionUrlEvent({ method, target, headers: picked(req, forwarded) });
    }
    const headers: Record<string, string> = { host: ORIGIN_HOST };
    const cookies: string[] = [];
    for (const [name, value] of pairsOf(routed.headers)) {
      if (name === 'host') continue;
      if (name === 'cookie') cookies.push(...value.split(/;\s*/).filter((c) => c !== ''));
      else headers[name] = headers[name] === undefined ? value : `${headers[name]},${value}`;
    }
    const body = method === 'GET' || method === 'HEAD' ? undefined : await bodyOf(req);
    if (body === null) return undefined;
    return {
      ...functionUrlEvent({ method, target, headers }),
      ...(cookies.length > 0 ? { cookies } : {}),
      ...(body === undefined ? {} : { body: body.toString('base64'), isBase64Encoded: true }),
    };
  }

  function send(req: IncomingMessage, res: ServerResponse, result: FunctionUrlResult): void {
    const status = result.statusCode ?? 200;
    const responseHeaders: Record<string, string | string[]> = {
      ...(result.headers as Record<string, string> | undefined),
    };
    if (result.cookies !== undefined && result.cookies.length > 0)
      responseHeaders['set-cookie'] = result.cookies;
    const body =
      result.body === undefined || req.method === 'HEAD' || BODYLESS_STATUSES.has(status)
        ? undefined
        : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
    // A function URL behind CloudFront sends the length of a buffered body; for HEAD, only the
    // length the handler states (from the stored page) is passed through.
    if (body !== undefined && !hasHeader(responseHeaders, 'content-length'))
      responseHeaders['content-length'] = String(body.length);
    // While draining, each answer closes its connection, so keep-alive does not hold the stop.
    if (closing) responseHeaders.connection = 'close';
    res.writeHead(status, responseHeaders);
    res.end(body);
  }

  if (options.keepAliveTimeoutMs !== undefined)
    server.keepAliveTimeout = options.keepAliveTimeoutMs;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? LOOPBACK, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${displayHost(options.host ?? LOOPBACK)}:${port}`,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      // Answers sent before `closing` was set may have left keep-alive connections open.
      server.closeIdleConnections();
      await closed;
      return failedWhileClosing;
    },
  };
}

const pathOf = (target: string | undefined): string => (target ?? '/').split('?')[0] ?? '/';
const queryOf = (target: string | undefined): string => {
  const at = (target ?? '').indexOf('?');
  return at < 0 ? '' : (target ?? '').slice(at + 1);
};

/** The origin function URL's own host name (the viewer's never reaches the origin). */
const ORIGIN_HOST = 'origin.lambda-url.localhost';

interface EdgeResponseLike {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** The named headers of a request (single values), with the origin's own Host. */
function picked(req: IncomingMessage, names: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = { host: ORIGIN_HOST };
  for (const name of names) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** The whole body, or null past what a function URL takes. */
async function bodyOf(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= MAX_FUNCTION_URL_BODY_BYTES) chunks.push(chunk);
  }
  return size > MAX_FUNCTION_URL_BODY_BYTES ? null : Buffer.concat(chunks);
}

/** The body as sent (UTF-8), cut one byte past the endpoint's limit so the handler says 413. */
async function rawBodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (size > MAX_REVALIDATE_BODY_BYTES) continue; // drain the rest without keeping it
    chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks)
    .subarray(0, MAX_REVALIDATE_BODY_BYTES + 1)
    .toString('utf8');
}

const hasHeader = (headers: Record<string, unknown>, name: string) =>
  Object.keys(headers).some((key) => key.toLowerCase() === name);

/** What to print for the URL: loopback and wildcard addresses are reached as localhost. */
function displayHost(host: string): string {
  if (host === LOOPBACK || host === '0.0.0.0' || host === '::' || host === '::1')
    return 'localhost';
  return isIPv6(host) ? `[${host}]` : host;
}
