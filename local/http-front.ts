/**
 * `npm start`'s HTTP server: every request goes through the local CloudFront (`cloudfront`,
 * built from the synthesized distribution: `local/cloudfront/`), which routes, keys, keeps and
 * answers as the deployed one would, with the origin function behind its function URL and the
 * upstream as its origins. `POST /_isr/revalidate` (and the status paths under it) goes to the
 * revalidate function instead, with its raw body: deployed, that function has a URL of its own.
 * Without `cloudfront` (unit tests of the function URL conversion), a request goes straight to
 * the origin as a function URL event with the allow-listed headers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv6, type AddressInfo } from 'node:net';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { MAX_REVALIDATE_BODY_BYTES } from '../lambda/core/revalidate/request.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../lambda/core/revalidate/webhook-signature.js';
import type { FunctionUrlResult } from '../lambda/origin/handler.js';
import { LOOPBACK } from './backends/backend.js';
import type { EdgeAnswer, LocalCloudFront } from './cloudfront/cloudfront.js';
import { invokeFunctionUrl, type FunctionUrlHandler } from './cloudfront/origins.js';
import { functionUrlEvent } from './function-url.js';
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
  /** The origin function, buffered or streaming (`{ streaming }`), behind its function URL. */
  readonly handler: FunctionUrlHandler;
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
   * The local CloudFront every request goes through (`localCloudFront` in `local/edge.ts`).
   * @default - none: every request goes straight to the origin
   */
  readonly cloudfront?: LocalCloudFront | undefined;
}

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
    const cloudfront = options.cloudfront;
    if (cloudfront !== undefined) {
      const answer = await cloudfront.handle(
        {
          method: req.method ?? 'GET',
          uri: pathOf(req.url),
          querystring: queryOf(req.url),
          headers: req.headers,
          clientIp: req.socket.remoteAddress ?? LOOPBACK,
        },
        () => wholeBodyOf(req),
      );
      return relay(req, res, answer);
    }
    const target = req.url ?? '/';
    const event = functionUrlEvent({
      method: req.method ?? 'GET',
      target,
      headers: picked(req, forwarded),
    });
    const context = lambdaContext(options.functionTimeoutMs, 'isr-origin');
    if (typeof options.handler !== 'function') {
      return relay(req, res, await invokeFunctionUrl(options.handler, event, context));
    }
    return send(req, res, await options.handler(event, context));
  }

  /** The local CloudFront's answer (or a streaming function URL's), streamed to the viewer. */
  async function relay(
    req: IncomingMessage,
    res: ServerResponse,
    answer: Pick<EdgeAnswer, 'status' | 'headers' | 'body'>,
  ): Promise<void> {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of answer.headers) {
      const previous = headers[name];
      headers[name] = previous === undefined ? value : [previous, value].flat();
    }
    if (closing) headers.connection = 'close';
    res.writeHead(answer.status, headers);
    if (req.method === 'HEAD' || BODYLESS_STATUSES.has(answer.status)) {
      res.end();
      return;
    }
    for await (const chunk of answer.body) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
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

/** The named headers of a request (single values), with the origin's own Host. */
function picked(req: IncomingMessage, names: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = { host: ORIGIN_HOST };
  for (const name of names) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** The whole body, or undefined when there is none. */
async function wholeBodyOf(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks);
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
