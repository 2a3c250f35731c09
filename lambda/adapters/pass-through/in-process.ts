/**
 * Pass-through to an upstream living in this process (a test's upstream, an embedded app): the
 * same contract as `HttpPassThrough` without a socket. It records what it was sent.
 */
import { PassFailure, PassThroughError } from '../../core/errors.js';
import type { PassAnswer, PassRequest, PassThrough } from '../../core/serve/ports.js';

/** What the in-process upstream answers: the body as bytes or text. */
export interface InProcessAnswer {
  readonly status: number;
  readonly headers?: readonly (readonly [string, string])[];
  readonly body?: Uint8Array | string;
}

export type InProcessUpstream = (
  request: PassRequest & { readonly body: Uint8Array | undefined },
) => Promise<InProcessAnswer> | InProcessAnswer;

export class InProcessPassThrough implements PassThrough {
  /** Every request forwarded, body read. */
  readonly seen: (PassRequest & { readonly body: Uint8Array | undefined })[] = [];

  constructor(
    readonly upstream: InProcessUpstream,
    readonly maxBodyBytes = Number.POSITIVE_INFINITY,
  ) {}

  async forward(request: PassRequest): Promise<PassAnswer> {
    const body = await readBody(request.body, this.maxBodyBytes);
    const received = { ...request, body };
    this.seen.push(received);
    const answer = await this.upstream(received);
    const bytes =
      typeof answer.body === 'string' ? new TextEncoder().encode(answer.body) : answer.body;
    return {
      status: answer.status,
      headers: answer.headers ?? [],
      body: bytes === undefined || bytes.byteLength === 0 ? [] : [bytes],
    };
  }
}

async function readBody(
  body: PassRequest['body'],
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  if (body === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body instanceof Uint8Array ? [body] : body) chunks.push(chunk);
  const whole = Buffer.concat(chunks);
  if (whole.byteLength > maxBytes) {
    throw new PassThroughError(PassFailure.BodyTooLarge, `the request body is over ${maxBytes}`);
  }
  return whole;
}
