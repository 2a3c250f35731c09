/**
 * The local stand-in for CloudFront in front of the origin's function URL: an HTTP server that
 * turns each request into a function URL event, forwarding only what the CDK origin request
 * policy forwards (the tenant header) plus the conditional headers CloudFront sends when it
 * revalidates. The viewer's Host never reaches the origin.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import type { FunctionUrlResult } from '../lambda/origin/handler.js';
import { functionUrlEvent } from './function-url.js';
import { lambdaContext } from './worker-poller.js';

export type OriginHandler = (
  event: LambdaFunctionURLEvent,
  context: Context,
) => Promise<FunctionUrlResult>;

export interface HttpFrontOptions {
  readonly handler: OriginHandler;
  readonly port: number;
  /** Lower-case tenant header to forward, in multi-tenant mode. */
  readonly tenantHeader: string | undefined;
  /** The origin function's timeout, as its context reports it. */
  readonly functionTimeoutMs: number;
  readonly onError: (error: unknown) => void;
}

const CONDITIONAL_HEADERS = ['if-none-match', 'if-modified-since'];

export interface HttpFront {
  readonly url: string;
  /** Stops accepting requests and waits for those in flight. */
  close(): Promise<void>;
}

export async function startHttpFront(options: HttpFrontOptions): Promise<HttpFront> {
  const forwarded = [
    ...CONDITIONAL_HEADERS,
    ...(options.tenantHeader === undefined ? [] : [options.tenantHeader]),
  ];
  const server: Server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      options.onError(error);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('origin failed');
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const headers: Record<string, string> = { host: 'origin.lambda-url.localhost' };
    for (const name of forwarded) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const event = functionUrlEvent({
      method: req.method ?? 'GET',
      target: req.url ?? '/',
      headers,
    });
    const result = await options.handler(
      event,
      lambdaContext(options.functionTimeoutMs, 'isr-origin'),
    );
    res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
    if (result.body === undefined) {
      res.end();
      return;
    }
    res.end(Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, () => resolve());
  });
  return {
    url: `http://localhost:${options.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
