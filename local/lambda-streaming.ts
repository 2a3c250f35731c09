/**
 * Lambda response streaming, played locally: the `awslambda` global the Node.js runtime gives a
 * handler's module, the response stream it hands a streaming handler, and what a function URL in
 * RESPONSE_STREAM mode makes of that stream. Follows the runtime interface client
 * (github.com/aws/aws-lambda-nodejs-runtime-interface-client: src/UserFunction.js sets the
 * global and marks a handler with `Symbol.for('aws.lambda.runtime.handler.streaming')`,
 * src/HttpResponseStream.js writes a JSON prelude and 8 null bytes before the first body byte,
 * src/ResponseStream.js refuses a content type after the first write) and "Invoking a response
 * streaming enabled function using Lambda function URLs",
 * https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html.
 */
import { PassThrough } from 'node:stream';
import type { Context, LambdaFunctionURLEvent } from 'aws-lambda';

export const HANDLER_STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
export const STREAM_RESPONSE = 'response';
/** The content type `HttpResponseStream.from` sets: a prelude, 8 null bytes, then the body. */
export const HTTP_INTEGRATION_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response';
const DELIMITER = new Uint8Array(8);

type Write = (chunk: string | Uint8Array) => void;

/** The stream a streaming handler writes to: bytes in order, its content type until then. */
export class ResponseStream extends PassThrough {
  contentType = 'application/octet-stream';
  _onBeforeFirstWrite: ((write: Write) => void) | undefined;
  #written = false;

  setContentType(type: string): void {
    if (this.#written) throw new Error('Cannot set content-type, too late.');
    this.contentType = type;
  }

  override write(chunk: unknown, ...rest: never[]): boolean {
    const bytes =
      typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : JSON.stringify(chunk);
    if (!this.#written) {
      this.#written = true;
      this._onBeforeFirstWrite?.((first) => super.write(first));
    }
    return super.write(bytes, ...rest);
  }
}

/** `awslambda.HttpResponseStream`, as the runtime's: the prelude goes before the first write. */
export const HttpResponseStream = {
  from(stream: ResponseStream, prelude: unknown): ResponseStream {
    stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
    const metadata = JSON.stringify(prelude);
    stream._onBeforeFirstWrite = (write) => {
      write(metadata);
      write(DELIMITER);
    };
    return stream;
  },
};

/** A handler as the runtime calls a streaming one: the event, the response stream, the context. */
export type StreamingHandler = ((
  event: LambdaFunctionURLEvent,
  stream: ResponseStream,
  context: Context,
) => Promise<unknown>) & { [HANDLER_STREAMING]?: string };

/**
 * Sets `globalThis.awslambda`'s streaming members as the runtime does before it loads a
 * handler's module. Added to whatever object is there: the SDK's InvokeStore
 * (@aws/lambda-invoke-store) makes an empty `awslambda` of its own when imported first.
 */
export function installLambdaStreaming(): void {
  const global = globalThis as { awslambda?: Record<string, unknown> };
  const awslambda = (global.awslambda ??= {});
  awslambda.streamifyResponse ??= (handler: StreamingHandler) => {
    handler[HANDLER_STREAMING] = STREAM_RESPONSE;
    return handler;
  };
  awslambda.HttpResponseStream ??= HttpResponseStream;
}

/** Whether the runtime would invoke `handler` with a response stream (`streamifyResponse`). */
export const isStreamingHandler = (handler: unknown): handler is StreamingHandler =>
  typeof handler === 'function' &&
  (handler as StreamingHandler)[HANDLER_STREAMING] === STREAM_RESPONSE;

/** A function URL's answer to a streamed invocation: headers once known, the body as it comes. */
export interface StreamedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly cookies: readonly string[];
  readonly body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/**
 * Invokes a streaming handler as the runtime does and reads its stream as the function URL does:
 * resolves once the prelude is in (status, headers, cookies), the body streaming behind it. A
 * stream without the prelude's content type is a 200 of that type. A handler that fails before
 * its first byte is a 502, as a buffered function's error is; after it, the body breaks off.
 */
export async function invokeStreaming(
  handler: StreamingHandler,
  event: LambdaFunctionURLEvent,
  context: Context,
): Promise<StreamedAnswer> {
  const stream = new ResponseStream();
  // The runtime ends the stream when the handler resolves, and fails it when it rejects.
  void Promise.resolve()
    .then(() => handler(event, stream, context))
    .then(
      () => {
        if (!stream.writableEnded) stream.end();
      },
      (error: unknown) => stream.destroy(error instanceof Error ? error : new Error(String(error))),
    );
  const reader = stream[Symbol.asyncIterator]();
  try {
    return await answerOf(reader, () => stream.contentType);
  } catch {
    return functionError();
  }
}

const functionError = (): StreamedAnswer => ({
  status: 502,
  headers: { 'content-type': 'application/json' },
  cookies: [],
  body: [Buffer.from(JSON.stringify({ Message: 'Internal Server Error' }))],
});

/** A whole streamed invocation's bytes (a bundle run apart), read as the function URL does. */
export async function readFunctionUrlStream(
  bytes: Uint8Array,
  contentType: string,
): Promise<StreamedAnswer> {
  const reader = [Buffer.from(bytes)][Symbol.iterator]();
  const asyncReader: AsyncIterator<Buffer> = { next: () => Promise.resolve(reader.next()) };
  return answerOf(asyncReader, () => contentType);
}

/** Splits the prelude (JSON, then 8 null bytes) from the body, as the function URL does. */
async function answerOf(
  reader: AsyncIterator<Buffer>,
  contentType: () => string,
): Promise<StreamedAnswer> {
  let head = Buffer.alloc(0);
  for (;;) {
    const next = await reader.next();
    if (next.done === true && head.length === 0) {
      return {
        status: 200,
        headers: { 'content-type': contentType() },
        cookies: [],
        body: [],
      };
    }
    if (next.done !== true) head = Buffer.concat([head, next.value]);
    if (contentType() !== HTTP_INTEGRATION_CONTENT_TYPE) {
      const rest = next.done === true ? [] : [head];
      return {
        status: 200,
        headers: { 'content-type': contentType() },
        cookies: [],
        body: followedBy(rest, reader),
      };
    }
    const at = head.indexOf(Buffer.from(DELIMITER));
    if (at >= 0) {
      const prelude = JSON.parse(head.subarray(0, at).toString('utf8')) as Prelude;
      const first = head.subarray(at + DELIMITER.length);
      return {
        status: prelude.statusCode ?? 200,
        headers: Object.fromEntries(
          Object.entries(prelude.headers ?? {}).map(([name, value]) => [
            name.toLowerCase(),
            String(value),
          ]),
        ),
        cookies: prelude.cookies ?? [],
        body: followedBy(first.length === 0 ? [] : [first], reader),
      };
    }
    if (next.done === true) throw new Error('the stream ended inside its prelude');
  }
}

interface Prelude {
  readonly statusCode?: number;
  readonly headers?: Record<string, unknown>;
  readonly cookies?: string[];
}

/** The bytes already read, then the rest of the stream. */
async function* followedBy(
  first: readonly Uint8Array[],
  reader: AsyncIterator<Buffer>,
): AsyncGenerator<Uint8Array> {
  yield* first;
  for (;;) {
    const next = await reader.next();
    if (next.done === true) return;
    yield next.value;
  }
}
