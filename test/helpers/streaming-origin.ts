/**
 * The origin as deployed, for tests: `createStreamingOriginHandler` (RESPONSE_STREAM function
 * URL) called as Lambda's runtime calls it (`local/lambda-streaming.ts`), its streamed answer
 * (prelude + body) collected into one value the tests assert on. What a test proves is then what
 * the deployed function does ("Invoking a response streaming enabled function using Lambda
 * function URLs", https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html).
 */
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';
import { buildStreamingOriginHandler } from '../../lambda/origin/build.js';
import type { OriginHandlerOptions } from '../../lambda/origin/handler.js';
import { createStreamingOriginHandler } from '../../lambda/origin/streaming.js';
import type { StreamingOrigin } from '../../local/cloudfront/origins.js';
import {
  HANDLER_STREAMING,
  HttpResponseStream,
  installLambdaStreaming,
  invokeStreaming,
  STREAM_RESPONSE,
  type ResponseStream,
  type StreamedAnswer,
  type StreamingHandler,
} from '../../local/lambda-streaming.js';

/** A streamed answer, read to its end: the prelude's fields and every body byte. */
export interface CollectedAnswer {
  readonly statusCode: number;
  /** Lower-case names, as the function URL reads the prelude. */
  readonly headers: Record<string, string>;
  readonly cookies: readonly string[];
  readonly body: Buffer;
}

/** The deployed origin behind its RESPONSE_STREAM function URL (the runtime's global set first). */
export function streamingOrigin(options: OriginHandlerOptions): StreamingOrigin {
  installLambdaStreaming();
  return { streaming: createStreamingOriginHandler(options) };
}

/** The origin as lambda/origin/index.ts builds it, from validated settings and clients. */
export function deployedOrigin(
  ...args: Parameters<typeof buildStreamingOriginHandler>
): StreamingOrigin {
  installLambdaStreaming();
  return { streaming: buildStreamingOriginHandler(...args) };
}

/** The origin as a function of one request, answering once its stream has ended. */
export const collecting =
  (origin: StreamingOrigin) =>
  (event: LambdaFunctionURLEvent, context: Context): Promise<CollectedAnswer> =>
    invokeCollected(origin, event, context);

/** Invokes the origin as the runtime does and reads the function URL's answer to its end. */
export async function invokeCollected(
  origin: StreamingOrigin,
  event: LambdaFunctionURLEvent,
  context: Context,
): Promise<CollectedAnswer> {
  const answer = await invokeStreaming(origin.streaming, event, context);
  return {
    statusCode: answer.status,
    headers: { ...answer.headers },
    cookies: answer.cookies,
    body: await bytesOf(answer.body),
  };
}

/** Every byte of a body as it streams. */
export async function bytesOf(body: StreamedAnswer['body']): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Marks `handler` as `awslambda.streamifyResponse` does, so the runtime hands it a stream. */
export const marked = (handler: StreamingHandler): StreamingHandler =>
  Object.assign(handler, { [HANDLER_STREAMING]: STREAM_RESPONSE });

/** The origin, with `before` run on each invocation (counting calls); the stream untouched. */
export function observed(
  origin: StreamingOrigin,
  before: (event: LambdaFunctionURLEvent) => void,
): StreamingOrigin {
  return {
    streaming: marked((event, stream, context) => {
      before(event);
      return origin.streaming(event, stream, context);
    }),
  };
}

/**
 * The origin with its answer rewritten on the way out (a test's defect or its negative
 * control): the inner answer is read as the function URL reads it, changed, then written to the
 * runtime's stream, prelude first, as `awslambda.HttpResponseStream.from` writes it.
 */
export function rewritten(
  origin: StreamingOrigin,
  change: (answer: StreamedAnswer) => StreamedAnswer | Promise<StreamedAnswer>,
): StreamingOrigin {
  return {
    streaming: marked(async (event, stream: ResponseStream, context) => {
      const answer = await change(await invokeStreaming(origin.streaming, event, context));
      const out = HttpResponseStream.from(stream, {
        statusCode: answer.status,
        headers: answer.headers,
        ...(answer.cookies.length === 0 ? {} : { cookies: [...answer.cookies] }),
      });
      out.write(new Uint8Array(0));
      for await (const chunk of answer.body) out.write(chunk);
      out.end();
    }),
  };
}
