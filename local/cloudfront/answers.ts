/**
 * The answers the local CloudFront gives without a fresh trip to the origin, and the stored
 * objects it gives them from: its own errors, a viewer-request function's answer, a stored
 * object (a 304 when the viewer's `If-None-Match` matches its ETag: "Request and response
 * behavior for custom origins", Conditional requests,
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/RequestAndResponseBehaviorCustomOrigin.html),
 * and a stored object refreshed by a 304 (RFC 9111 §4.3.4).
 */
import type { Clock } from '../../lambda/core/clock.js';
import type { EdgeBehaviour, EdgeConfig } from './config.js';
import { cloudFrontError, type Body } from './origins.js';
import type { Pairs, ViewerRequest } from './requests.js';
import { EdgeResult, headerOf, recordOf, viewerHeaders } from './responses.js';
import { tagsOf, type StoredAnswer } from './store.js';
import { StoredAge, storeVerdict } from './ttl.js';

/** What the viewer gets. */
export interface EdgeAnswer {
  readonly status: number;
  readonly headers: Pairs;
  readonly body: Body;
  readonly result: EdgeResult;
}

/** An answer CloudFront makes itself (`Error from cloudfront`). */
export function generatedAnswer(status: number, message: string, requestId: string): EdgeAnswer {
  const answer = cloudFrontError(status, message);
  return {
    status,
    headers: viewerHeaders(answer.headers, {
      behaviour: undefined,
      result: EdgeResult.Error,
      requestId,
    }),
    body: answer.body,
    result: EdgeResult.Error,
  };
}

/** A viewer-request function's own answer. */
export function functionAnswer(
  response: { status: number; headers: Readonly<Record<string, string>>; body: Buffer },
  requestId: string,
): EdgeAnswer {
  const headers = Object.entries(response.headers).map(([name, value]): [string, string] => [
    name.toLowerCase(),
    value,
  ]);
  const result = EdgeResult.FunctionGeneratedResponse;
  return {
    status: response.status,
    headers: viewerHeaders(headers, { behaviour: undefined, result, requestId }),
    body: [response.body],
    result,
  };
}

const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/** A stored object as the viewer gets it, with its Age; a 304 for a matching If-None-Match. */
export function storedAnswer(
  stored: StoredAnswer,
  behaviour: EdgeBehaviour,
  request: ViewerRequest,
  result: EdgeResult,
  requestId: string,
): EdgeAnswer {
  const age = stored.age.seconds;
  const headers = viewerHeaders(stored.headers, { behaviour, result, requestId, age });
  const etag = headerOf(stored.headers, 'etag');
  const ifNoneMatch = request.headers['if-none-match'];
  const matches =
    etag !== undefined &&
    typeof ifNoneMatch === 'string' &&
    ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
  if (matches && stored.status === 200) {
    const without = headers.filter(([name]) => name !== 'content-length');
    return { status: 304, headers: without, body: [], result };
  }
  const body = request.method === 'HEAD' ? [] : [stored.body];
  return { status: stored.status, headers, body, result };
}

/** The object CloudFront stores for an answer under `key`, or undefined when it keeps none. */
export function objectToStore(
  config: EdgeConfig,
  behaviour: EdgeBehaviour,
  at: { readonly key: string; readonly path: string },
  answer: { readonly status: number; readonly headers: Pairs; readonly body: Buffer },
  clock: Pick<Clock, 'now'>,
): StoredAnswer | undefined {
  const { status, headers } = answer;
  const verdict = storeVerdict(
    status,
    recordOf(headers),
    behaviour.cachePolicy,
    config.errorCachingMinTtl,
    clock,
  );
  if (!verdict.store) return undefined;
  const tagHeader = config.cacheTagHeader;
  return {
    ...at,
    ...answer,
    tags: tagHeader === undefined ? [] : tagsOf(headerOf(headers, tagHeader)),
    freshness: verdict.freshness,
    age: new StoredAge(verdict.freshness, headerOf(headers, 'age'), clock),
  };
}

/** A stored object's headers updated by a 304's (RFC 9111 §4.3.4). */
export function mergeHeaders(stored: Pairs, notModified: Pairs): Pairs {
  const updated = notModified.filter(([name]) => name !== 'content-length');
  const replaced = new Set(updated.map(([name]) => name));
  return [...stored.filter(([name]) => !replaced.has(name)), ...updated];
}

export async function collect(body: Body): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
