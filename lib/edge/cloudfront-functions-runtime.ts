/**
 * A small emulation of the CloudFront Functions runtime (JavaScript 2.0, viewer request), so
 * `npm start` and the tests run the very source the distribution runs: the event shape
 * (lower-case headers, cookies and query parameters as objects with `multiValue`), strict mode,
 * the `cloudfront` module's `selectRequestOriginById`, and the checks CloudFront makes on what
 * the function returns (a function that throws is a 503, an invalid result a 502). Not emulated:
 * the compute budget, `updateRequestOrigin`, origin groups and the key-value store.
 */
import { randomUUID } from 'node:crypto';
import { createContext, Script, type Context } from 'node:vm';

/** A viewer request as an HTTP server sees it. */
export interface EdgeRequest {
  readonly method: string;
  /** The path as received (percent-encoded), without the query. */
  readonly uri: string;
  /** The raw query string without `?`; `''` when there is none. */
  readonly querystring: string;
  /** Header names in any case; several values of one header as an array. */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The viewer's address. @default '127.0.0.1' */
  readonly clientIp?: string | undefined;
  /**
   * CloudFront's id of this request (`event.context.requestId`,
   * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/functions-event-structure.html). @default a new one per call
   */
  readonly requestId?: string | undefined;
}

/** An answer the function made itself (it never reaches an origin). */
export interface EdgeResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/**
 * What the function decided: the request as it goes on, and the origin it selected (undefined:
 * the behaviour's own), or its own answer.
 */
export type EdgeResult =
  | { readonly request: EdgeRequest; readonly origin: string | undefined }
  | { readonly response: EdgeResponse };

/** The function failed as CloudFront would report it: 503 when it threw, 502 for a bad result. */
export class EdgeFunctionError extends Error {
  override readonly name = 'EdgeFunctionError';
  constructor(
    readonly status: 502 | 503,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface EdgeRuntimeOptions {
  /** The distribution's origin ids a function may select. @default - any id */
  readonly origins?: readonly string[] | undefined;
}

type Value = { value: string; multiValue?: { value: string }[] };
type ValueObject = Record<string, Value>;
interface CompiledFunction {
  readonly context: Context;
  readonly selection: { origin: string | undefined; allowed: readonly string[] | undefined };
}

const IMPORT_CLOUDFRONT = /^import cf from 'cloudfront';\n/;
/** Headers CloudFront refuses a function to add (Developer Guide, "Restrictions on all edge functions"). */
const DISALLOWED =
  /^(connection|expect|keep-alive|proxy-authenticate|proxy-authorization|proxy-connection|trailer|upgrade|x-accel-.*|x-amz-cf-.*|x-amzn-.*|x-cache|x-edge-.*|x-forwarded-proto|x-real-ip)$/;
const compiled = new Map<string, CompiledFunction>();

/** Runs `source`'s `handler` on one viewer request, as CloudFront would before its cache lookup. */
export function runViewerRequest(
  source: string,
  request: EdgeRequest,
  options: EdgeRuntimeOptions = {},
): EdgeResult {
  const fn = compile(source);
  fn.selection.origin = undefined;
  fn.selection.allowed = options.origins;
  let result: unknown;
  try {
    result = (fn.context.handler as (event: unknown) => unknown)(eventOf(request));
  } catch (error) {
    throw new EdgeFunctionError(503, `the function threw: ${(error as Error).message}`, {
      cause: error,
    });
  }
  // The result comes from the function's own realm: no instanceof.
  if (typeof (result as { then?: unknown } | undefined)?.then === 'function') {
    throw new EdgeFunctionError(502, 'async handlers are not emulated');
  }
  const returned = result as Record<string, unknown> | undefined;
  if (returned === undefined || typeof returned !== 'object') {
    throw new EdgeFunctionError(502, 'the function returned neither a request nor a response');
  }
  if ('statusCode' in returned) return { response: responseOf(returned) };
  return { request: requestOf(returned, request), origin: fn.selection.origin };
}

/** One context per source, reused: the handler is synchronous, so calls never interleave. */
function compile(source: string): CompiledFunction {
  const known = compiled.get(source);
  if (known !== undefined) return known;
  const selection: CompiledFunction['selection'] = { origin: undefined, allowed: undefined };
  const cloudfront = {
    selectRequestOriginById(id: unknown) {
      if (typeof id !== 'string' || (selection.allowed && !selection.allowed.includes(id))) {
        throw new Error(`no origin ${String(id)} in the distribution`);
      }
      selection.origin = id;
    },
    updateRequestOrigin() {
      throw new Error('updateRequestOrigin is not emulated');
    },
    createRequestOriginGroup() {
      throw new Error('createRequestOriginGroup is not emulated');
    },
  };
  const context = createContext({ __cloudfront: cloudfront });
  const text = `"use strict";\n${source.replace(IMPORT_CLOUDFRONT, 'var cf = __cloudfront;\n')}`;
  new Script(text, { filename: 'viewer-request.js' }).runInContext(context);
  if (typeof context.handler !== 'function') throw new Error('the source defines no handler');
  const fn = { context, selection };
  if (compiled.size > 16) compiled.clear();
  compiled.set(source, fn);
  return fn;
}

/** The event CloudFront hands a viewer-request function. */
function eventOf(request: EdgeRequest) {
  const headers: ValueObject = {};
  const cookies: ValueObject = {};
  for (const [name, raw] of Object.entries(request.headers)) {
    if (raw === undefined) continue;
    const values = typeof raw === 'string' ? [raw] : [...raw];
    const lower = name.toLowerCase();
    if (lower === 'cookie') {
      for (const pair of values.flatMap((value) => value.split(';'))) {
        const at = pair.indexOf('=');
        const key = (at < 0 ? pair : pair.slice(0, at)).trim();
        if (key !== '') add(cookies, key, at < 0 ? '' : pair.slice(at + 1).trim());
      }
    } else {
      for (const value of values) add(headers, lower, value);
    }
  }
  const querystring: ValueObject = {};
  for (const part of request.querystring.split('&')) {
    if (part === '') continue;
    const at = part.indexOf('=');
    add(querystring, at < 0 ? part : part.slice(0, at), at < 0 ? '' : part.slice(at + 1));
  }
  return {
    version: '1.0',
    context: {
      distributionDomainName: 'local.cloudfront.net',
      distributionId: 'LOCAL',
      eventType: 'viewer-request',
      requestId: request.requestId ?? randomUUID(),
    },
    viewer: { ip: request.clientIp ?? '127.0.0.1' },
    request: { method: request.method, uri: request.uri, querystring, headers, cookies },
  };
}

/** Adds one value under `name`, keeping repeats in `multiValue` as CloudFront does. */
function add(target: ValueObject, name: string, value: string): void {
  const known = target[name];
  if (known === undefined) {
    target[name] = { value };
    return;
  }
  known.multiValue ??= [{ value: known.value }];
  known.multiValue.push({ value });
}

/** The values of one field, `multiValue` winning when present. */
function valuesOf(field: unknown, where: string): string[] {
  const item = field as Partial<Value> | undefined;
  const values = Array.isArray(item?.multiValue)
    ? item.multiValue.map((entry) => entry?.value)
    : [item?.value];
  if (values.some((value) => typeof value !== 'string')) {
    throw new EdgeFunctionError(502, `${where} must be { value: string }`);
  }
  return values as string[];
}

const objectOf = (value: unknown, where: string): Record<string, unknown> => {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) {
    throw new EdgeFunctionError(502, `${where} must be an object`);
  }
  return value as Record<string, unknown>;
};

/** The request the function returned, checked as CloudFront checks it. */
function requestOf(returned: Record<string, unknown>, original: EdgeRequest): EdgeRequest {
  if (returned.method !== original.method) {
    throw new EdgeFunctionError(502, 'the function changed the method, which is read-only');
  }
  if (typeof returned.uri !== 'string' || !returned.uri.startsWith('/')) {
    throw new EdgeFunctionError(502, 'the uri must be a string starting with "/"');
  }
  const headers: Record<string, string | string[]> = {};
  for (const [name, field] of Object.entries(objectOf(returned.headers, 'headers'))) {
    if (name !== name.toLowerCase()) {
      throw new EdgeFunctionError(502, `header ${name} must be lower-case`);
    }
    if (DISALLOWED.test(name) && !(name in lowerCased(original.headers))) {
      throw new EdgeFunctionError(502, `a function may not add the header ${name}`);
    }
    const values = valuesOf(field, `header ${name}`);
    headers[name] = values.length === 1 ? values[0] : values;
  }
  const cookies = Object.entries(objectOf(returned.cookies, 'cookies')).flatMap(([name, field]) =>
    valuesOf(field, `cookie ${name}`).map((value) => `${name}=${value}`),
  );
  if (cookies.length > 0) headers.cookie = cookies.join('; ');
  const query = Object.entries(objectOf(returned.querystring, 'querystring')).flatMap(
    ([name, field]) =>
      valuesOf(field, `query parameter ${name}`).map((value) =>
        value === '' ? name : `${name}=${value}`,
      ),
  );
  return {
    method: original.method,
    uri: returned.uri,
    querystring: query.join('&'),
    headers,
    clientIp: original.clientIp,
    requestId: original.requestId,
  };
}

const lowerCased = (headers: EdgeRequest['headers']): Record<string, unknown> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/** The answer the function made, checked as CloudFront checks it. */
function responseOf(returned: Record<string, unknown>): EdgeResponse {
  const status = returned.statusCode;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new EdgeFunctionError(502, 'statusCode must be an integer from 100 to 599');
  }
  const headers: Record<string, string> = {};
  for (const [name, field] of Object.entries(objectOf(returned.headers, 'headers'))) {
    headers[name] = valuesOf(field, `header ${name}`).join(', ');
  }
  const body = returned.body as string | { encoding?: string; data?: unknown } | undefined;
  if (body === undefined) return { status, headers, body: Buffer.alloc(0) };
  if (typeof body === 'string') return { status, headers, body: Buffer.from(body) };
  if (typeof body.data !== 'string' || (body.encoding !== 'text' && body.encoding !== 'base64')) {
    throw new EdgeFunctionError(502, 'body must be a string or { encoding: text|base64, data }');
  }
  return {
    status,
    headers,
    body: Buffer.from(body.data, body.encoding === 'base64' ? 'base64' : 'utf8'),
  };
}
