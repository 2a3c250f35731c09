/**
 * The origin behind a RESPONSE_STREAM function URL ("Invoking a response streaming enabled
 * function using Lambda function URLs",
 * https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html), which CloudFront
 * takes as an origin as it takes a buffered one ("Use a Lambda function URL" in "Use various
 * origins with CloudFront distributions",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/DownloadDistS3AndCustomOrigins.html#concept_lambda_function_url).
 * middy's `streamifyResponse` wraps the handler in `awslambda.streamifyResponse` and writes the
 * status, headers and cookies as the prelude of `awslambda.HttpResponseStream.from`, then the body.
 * A streamed pass's body goes out as the upstream sends it; every other answer is written whole.
 */
import { Readable, type Writable } from 'node:stream';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { publishMetrics } from '../shared/observability.js';
import type { PageResponse } from '../core/serve/responses.js';
import { serveEvent, type OriginHandlerOptions } from './handler.js';

/** What middy streams: the prelude's fields, and the body as bytes (never base64). */
export interface StreamedResult {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly cookies?: string[];
  readonly body: Readable;
}

/**
 * The answer as a stream of bytes: HEAD and bodyless answers send none (a streamed function URL
 * has no `isBase64Encoded`: bytes go as they are). A pass that breaks off mid-body is logged;
 * the viewer's answer ends there, cut, as its status was sent already.
 */
export function toStreamedResult(
  response: PageResponse,
  head: boolean,
  onBrokenOff: (error: unknown) => void,
): StreamedResult {
  const chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array> = head
    ? []
    : (response.stream ?? (response.body === undefined ? [] : [response.body]));
  const cookies = response.cookies ?? [];
  return {
    statusCode: response.status,
    headers: response.headers,
    ...(cookies.length === 0 ? {} : { cookies: [...cookies] }),
    body: Readable.from(reported(chunks, onBrokenOff)),
  };
}

/**
 * The chunks, after an empty one: the runtime writes the prelude on the stream's first write
 * (src/HttpResponseStream.js), so the status and headers go out at once, even with no body.
 */
async function* reported(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  onBrokenOff: (error: unknown) => void,
): AsyncGenerator<Uint8Array> {
  yield new Uint8Array(0);
  try {
    for await (const chunk of chunks) yield chunk;
  } catch (error) {
    onBrokenOff(error);
    throw error;
  }
}

/** How the runtime calls a handler `awslambda.streamifyResponse` marked. */
export type LambdaStreamingHandler = (
  event: LambdaFunctionURLEvent,
  responseStream: Writable,
  context: Context,
) => Promise<void>;

/** The origin Lambda behind a RESPONSE_STREAM function URL (the deployed one; `npm start`'s). */
export function createStreamingOriginHandler(
  options: OriginHandlerOptions,
): LambdaStreamingHandler {
  const { logger } = options;
  const streamed = { ...options, deps: { ...options.deps, streamPasses: true } };
  const handler = middy(
    async (event: LambdaFunctionURLEvent, context: Context): Promise<StreamedResult> => {
      const { response, head } = await serveEvent(streamed, event, context);
      return toStreamedResult(response, head, (error) =>
        logger.error('pass broke off mid-answer', {
          decision: response.decision,
          idempotencyKey: context.awsRequestId,
          cacheKeyHash: response.cacheKeyHash,
          error,
        }),
      );
    },
    { streamifyResponse: true },
  )
    .use(injectLambdaContext(logger))
    .use(publishMetrics(options.metrics));
  // middy's types describe the buffered call; streamifyResponse's handler takes the stream.
  return handler as unknown as LambdaStreamingHandler;
}
