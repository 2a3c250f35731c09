/**
 * The local CloudFront's origins: the origin function behind its function URL and origin access
 * control, and any HTTP origin (the upstream). Each gets what CloudFront sends an origin
 * ("Request and response behavior for custom origins", HTTP request headers and CloudFront
 * behavior,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/RequestAndResponseBehaviorCustomOrigin.html):
 * the origin's own Host, `X-Forwarded-For`, `Via`, `X-Amz-Cf-Id`, and `User-Agent: Amazon
 * CloudFront` unless a policy forwards the viewer's.
 */
import { createHash, randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import type { FunctionUrlResult } from '../../lambda/origin/handler.js';
import { functionUrlEvent } from '../function-url.js';
import { invokeStreaming, isStreamingHandler, type StreamingHandler } from '../lambda-streaming.js';
import type { Pairs } from './requests.js';

export interface OriginRequest {
  readonly method: string;
  /** The raw path the viewer sent (CloudFront sends it as received). */
  readonly path: string;
  readonly query: Pairs;
  /** Forwarded viewer headers, lower-case, without Cookie. */
  readonly headers: Pairs;
  readonly cookies: Pairs;
  readonly body: Buffer | undefined;
  readonly clientIp: string;
  readonly requestId: string;
}

/** A body as it streams: bytes as they come, or all at once. */
export type Body = AsyncIterable<Uint8Array> | Iterable<Uint8Array>;

export interface OriginAnswer {
  readonly status: number;
  /** Made by CloudFront itself (the origin failed): `X-Cache: Error from cloudfront`. */
  readonly generated?: boolean;
  /** Lower-case names; Set-Cookie repeated. */
  readonly headers: Pairs;
  readonly body: Body;
}

export interface LocalOrigin {
  fetch(request: OriginRequest): Promise<OriginAnswer>;
}

/** A function behind a BUFFERED function URL: its whole answer at once. */
export type OriginHandler = (
  event: LambdaFunctionURLEvent,
  context: Context,
) => Promise<FunctionUrlResult>;

/** A function behind a RESPONSE_STREAM function URL (`awslambda.streamifyResponse`'s). */
export interface StreamingOrigin {
  readonly streaming: StreamingHandler;
}

/** The function behind the URL, by its invoke mode. */
export type FunctionUrlHandler = OriginHandler | StreamingOrigin;

/**
 * What the function URL answers for one invocation: a streaming handler's status and headers
 * once its prelude is written, its body as it comes (`local/lambda-streaming.ts`); a buffered
 * one's whole answer. A function error is a 502 either way (before the first streamed byte).
 */
export async function invokeFunctionUrl(
  handler: FunctionUrlHandler,
  event: LambdaFunctionURLEvent,
  context: Context,
): Promise<OriginAnswer> {
  const head = event.requestContext.http.method === 'HEAD';
  if (typeof handler !== 'function') {
    // The runtime invokes with a stream only a handler `streamifyResponse` marked.
    if (!isStreamingHandler(handler.streaming)) throw new Error('not a streaming handler');
    const streamed = await invokeStreaming(handler.streaming, event, context);
    const headers: Pairs = Object.entries(streamed.headers);
    for (const cookie of streamed.cookies) headers.push(['set-cookie', cookie]);
    headers.push(['date', new Date().toUTCString()], ['x-amzn-requestid', randomUUID()]);
    return { status: streamed.status, headers, body: head ? [] : streamed.body };
  }
  let result: FunctionUrlResult;
  try {
    result = await handler(event, context);
  } catch {
    // A function error: the function URL answers 502.
    return {
      status: 502,
      headers: [['content-type', 'application/json']],
      body: [Buffer.from(JSON.stringify({ Message: 'Internal Server Error' }))],
    };
  }
  return answerOfResult(result, head);
}

/** Headers CloudFront itself adds to every origin request. */
function cloudFrontHeaders(request: OriginRequest, host: string): Pairs {
  const forwardsAgent = request.headers.some(([name]) => name === 'user-agent');
  return [
    ['host', host],
    ['x-forwarded-for', request.clientIp],
    ['via', '2.0 local.cloudfront.net (CloudFront)'],
    ['x-amz-cf-id', request.requestId],
    ...(forwardsAgent ? [] : ([['user-agent', 'Amazon CloudFront']] as Pairs)),
  ];
}

const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

/** What Lambda answers a function URL request whose signature it cannot check. */
const lambdaRefusal = (message: string): OriginAnswer => ({
  status: 403,
  headers: [
    ['content-type', 'application/json'],
    ['x-amzn-errortype', 'AccessDeniedException'],
  ],
  body: [Buffer.from(JSON.stringify({ Message: message }))],
});

export interface FunctionUrlOriginOptions {
  readonly handler: FunctionUrlHandler;
  readonly context: () => Context;
  /** OAC's signing behaviour from the template (`always`). */
  readonly signing: string | undefined;
  /** The function URL's host name. @default origin.lambda-url.localhost */
  readonly host?: string;
}

/**
 * The origin function behind its URL and origin access control ("Restrict access to an AWS
 * Lambda function URL origin",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-restricting-access-to-lambda.html):
 * CloudFront signs every request with SigV4, replacing any Authorization the viewer sent. A
 * PUT or POST body is signed with the hash the viewer gives in `x-amz-content-sha256`: "Lambda
 * doesn't support unsigned payloads", so a body without it (or with another hash) is refused
 * with 403 before the function runs. The event carries the signing headers, as nothing in
 * AWS's documentation says the function URL removes them.
 */
export class FunctionUrlOrigin implements LocalOrigin {
  constructor(private readonly options: FunctionUrlOriginOptions) {}

  async fetch(request: OriginRequest): Promise<OriginAnswer> {
    const host = this.options.host ?? 'origin.lambda-url.localhost';
    const headers = new Map<string, string>();
    for (const [name, value] of [...request.headers, ...cloudFrontHeaders(request, host)]) {
      headers.set(
        name,
        headers.has(name) && name !== 'host' ? `${headers.get(name)},${value}` : value,
      );
    }
    if (this.options.signing === 'always') {
      const hash = body256(request.body);
      const given = headers.get('x-amz-content-sha256');
      if (request.body !== undefined && request.body.length > 0 && given !== hash) {
        return lambdaRefusal(
          given === undefined
            ? 'The request signature we calculated does not match the signature you provided: the payload is unsigned'
            : 'The request signature we calculated does not match the signature you provided',
        );
      }
      headers.set('authorization', signatureOf(request));
      headers.set('x-amz-date', amzDate());
      headers.set('x-amz-security-token', 'local-cloudfront-session');
      headers.set('x-amz-content-sha256', hash);
    }
    const query = request.query.map(([name, value]) => (value === '' ? name : `${name}=${value}`));
    const target = query.length === 0 ? request.path : `${request.path}?${query.join('&')}`;
    const event: LambdaFunctionURLEvent = {
      ...functionUrlEvent({ method: request.method, target, headers: Object.fromEntries(headers) }),
      ...(request.cookies.length === 0
        ? {}
        : { cookies: request.cookies.map(([name, value]) => `${name}=${value}`) }),
      ...(request.body === undefined
        ? {}
        : { body: request.body.toString('base64'), isBase64Encoded: true }),
    };
    return invokeFunctionUrl(this.options.handler, event, this.options.context());
  }
}

/** A buffered function URL's answer as CloudFront receives it (Lambda's own headers added). */
function answerOfResult(result: FunctionUrlResult, head: boolean): OriginAnswer {
  const headers: Pairs = Object.entries(result.headers ?? {}).map(([name, value]) => [
    name.toLowerCase(),
    String(value),
  ]);
  for (const cookie of result.cookies ?? []) headers.push(['set-cookie', cookie]);
  const body =
    result.body === undefined || head
      ? Buffer.alloc(0)
      : Buffer.from(result.body, result.isBase64Encoded === true ? 'base64' : 'utf8');
  if (!headers.some(([name]) => name === 'content-length') && !head) {
    headers.push(['content-length', String(body.length)]);
  }
  headers.push(['date', new Date().toUTCString()], ['x-amzn-requestid', randomUUID()]);
  return { status: result.statusCode ?? 200, headers, body: [body] };
}

const body256 = (body: Buffer | undefined): string =>
  body === undefined || body.length === 0
    ? EMPTY_SHA256
    : createHash('sha256').update(body).digest('hex');
const amzDate = (): string => new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
const signatureOf = (request: OriginRequest): string =>
  `AWS4-HMAC-SHA256 Credential=ASIALOCALCLOUDFRONT/${amzDate().slice(0, 8)}/local/lambda/aws4_request, ` +
  `SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${createHash('sha256').update(request.requestId).digest('hex')}`;

export interface HttpOriginOptions {
  /** Where the origin is reached locally (scheme, host, port; its path is the template's). */
  readonly url: string;
  readonly originPath: string;
  /** The template's custom origin headers; one only known at deploy is left out. */
  readonly customHeaders: Readonly<Record<string, string | undefined>>;
  readonly readTimeoutMs: number;
}

/**
 * A custom origin over HTTP(S): the forwarded request, streamed both ways. CloudFront answers
 * 502 when it cannot reach the origin and 504 when it does not answer in time ("Troubleshooting
 * error response status codes in CloudFront",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/troubleshooting-response-errors.html).
 */
export class HttpOrigin implements LocalOrigin {
  readonly #base: URL;

  constructor(private readonly options: HttpOriginOptions) {
    this.#base = new URL(options.url);
  }

  fetch(request: OriginRequest): Promise<OriginAnswer> {
    const url = new URL(this.#base.origin);
    url.pathname = `${this.options.originPath.replace(/\/$/, '')}${request.path}`;
    const query = request.query.map(([name, value]) => (value === '' ? name : `${name}=${value}`));
    url.search = query.join('&');
    const headers: Record<string, string | string[]> = {};
    const cookies = request.cookies.map(([name, value]) => `${name}=${value}`).join('; ');
    const custom = Object.entries(this.options.customHeaders).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    );
    const all: Pairs = [
      ...request.headers,
      ...(cookies === '' ? [] : ([['cookie', cookies]] as Pairs)),
      ...cloudFrontHeaders(request, url.host),
    ];
    for (const [name, value] of all) {
      if (custom.some(([header]) => header === name)) continue;
      const previous = headers[name];
      headers[name] = previous === undefined || name === 'host' ? value : [previous, value].flat();
    }
    for (const [name, value] of custom) headers[name] = value;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<OriginAnswer>((resolve) => {
      const outgoing = send(url, { method: request.method, headers });
      outgoing.setTimeout(this.options.readTimeoutMs, () => {
        outgoing.destroy();
        resolve(cloudFrontError(504, 'the origin did not answer in time'));
      });
      outgoing.on('response', (incoming: IncomingMessage) => resolve(answerOfIncoming(incoming)));
      outgoing.on('error', () => resolve(cloudFrontError(502, 'the origin could not be reached')));
      outgoing.end(request.body);
    });
  }
}

const answerOfIncoming = (incoming: IncomingMessage): OriginAnswer => {
  const headers: Pairs = [];
  for (let at = 0; at + 1 < incoming.rawHeaders.length; at += 2) {
    headers.push([incoming.rawHeaders[at].toLowerCase(), incoming.rawHeaders[at + 1]]);
  }
  return { status: incoming.statusCode ?? 502, headers, body: incoming };
};

/** An answer CloudFront makes itself when an origin fails. */
export const cloudFrontError = (status: number, message: string): OriginAnswer => ({
  status,
  generated: true,
  headers: [['content-type', 'text/html']],
  body: [
    Buffer.from(`<h1>${status} ERROR</h1><p>The request could not be satisfied. ${message}</p>`),
  ],
});
