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

/**
 * Invokes the origin as the runtime does and reads the function URL's answer to its end. A
 * handler that throws is a 502 at a real function URL, which a status check could not tell from
 * the origin's own 502: here it fails the test with its error, unless the test expects the crash
 * (`crashes: 'expected'`, e.g. a pass that breaks off mid-body).
 */
export async function invokeCollected(
  origin: StreamingOrigin,
  event: LambdaFunctionURLEvent,
  context: Context,
  options: { readonly crashes?: 'expected' } = {},
): Promise<CollectedAnswer> {
  let crash: { readonly error: unknown } | undefined;
  let settled: Promise<unknown> = Promise.resolve();
  const watched = marked((...args) => {
    settled = origin.streaming(...args).catch((error: unknown): never => {
      crash = { error };
      throw error;
    });
    return settled;
  });
  const answer = await invokeStreaming(watched, event, context);
  const body = await bytesOf(answer.body).catch((error: unknown) => {
    if (options.crashes !== 'expected') throw error;
    return Buffer.alloc(0);
  });
  await settled.catch(() => undefined);
  if (crash !== undefined && options.crashes !== 'expected') {
    throw new Error('the origin handler threw (a 502 at the function URL)', { cause: crash.error });
  }
  return {
    statusCode: answer.status,
    headers: { ...answer.headers },
    cookies: answer.cookies,
    body,
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
