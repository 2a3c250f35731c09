/**
 * What `npm start`'s front does where CloudFront sends a request to the upstream origin (pass and
 * static classes): the viewer's request streamed through `HttpPassThrough` and the answer
 * streamed back, bytes untouched. A failure is the status CloudFront would give (502, 504, 413).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeRequest } from '../lib/edge/cloudfront-functions-runtime.js';
import { PassThroughError } from '../lambda/core/errors.js';
import type { HeaderPairs } from '../lambda/core/forwarding.js';
import type { PassThrough } from '../lambda/core/serve/ports.js';

/** Header pairs of a request the edge function returned (a repeated header as several). */
export const pairsOf = (headers: EdgeRequest['headers']): [string, string][] =>
  Object.entries(headers).flatMap(([name, value]): [string, string][] =>
    value === undefined
      ? []
      : (typeof value === 'string' ? [value] : value).map((one): [string, string] => [
          name.toLowerCase(),
          one,
        ]),
  );

/** Forwards the routed request to the upstream and streams its answer to the viewer. */
export async function proxyToUpstream(
  upstream: PassThrough,
  routed: EdgeRequest,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<number> {
  const viewerGone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) viewerGone.abort();
  });
  try {
    const answer = await upstream.forward({
      method: routed.method,
      path: routed.uri,
      query: routed.querystring,
      headers: pairsOf(routed.headers),
      body: routed.method === 'GET' || routed.method === 'HEAD' ? undefined : req,
      signal: viewerGone.signal,
    });
    res.writeHead(answer.status, headerObject(answer.headers));
    for await (const chunk of answer.body) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
    return answer.status;
  } catch (error) {
    if (!(error instanceof PassThroughError)) throw error;
    if (!res.headersSent) {
      res.writeHead(error.failure.status, {
        'content-type': 'application/json',
        'cache-control': 'no-store',
      });
    }
    res.end(JSON.stringify({ error: error.code, message: error.message }));
    return error.failure.status;
  }
}

/** Pairs as Node's writeHead takes them: a repeated header (Set-Cookie) as an array. */
function headerObject(pairs: HeaderPairs): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of pairs) {
    const previous = headers[name];
    headers[name] = previous === undefined ? value : [previous, value].flat();
  }
  return headers;
}
