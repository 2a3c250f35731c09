/**
 * A streamed pass (`PassDeps.streamPasses`, the origin behind a RESPONSE_STREAM function URL):
 * its status and headers are decided from the upstream's before any of the body is read (the
 * privacy rule, internal headers dropped), the body follows as the upstream sends it, and the
 * pass timeout still bounds the whole answer: past it the body breaks off as a PassThroughError.
 */
import { describe, expect, it } from '@jest/globals';
import { PassFailure, PassThroughError } from '../../../../lambda/core/errors.js';
import type { PassAnswer, PassThrough } from '../../../../lambda/core/serve/ports.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { toStreamedResult } from '../../../../lambda/origin/streaming.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';

/** An upstream whose body waits on the test: the first chunk at once, the rest when released. */
function gatedUpstream() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let bodyRead = false;
  const signals: AbortSignal[] = [];
  /** As a socket's body: an abort of the request breaks it off. */
  async function* body(signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
    bodyRead = true;
    yield Buffer.from('<p>fallback</p>');
    const aborted = new Promise<never>((_resolve, reject) =>
      signal?.addEventListener('abort', () => reject(new Error('aborted'))),
    );
    await Promise.race([released, aborted]);
    yield Buffer.from('<p>rest</p>');
  }
  const passThrough: PassThrough = {
    forward: (request): Promise<PassAnswer> => {
      if (request.signal !== undefined) signals.push(request.signal);
      return Promise.resolve({
        status: 200,
        headers: [
          ['content-type', 'text/html'],
          ['cache-control', 'public, s-maxage=300'],
          ['x-upstream-tags', 'internal'],
          ['set-cookie', 'a=1'],
        ],
        body: body(request.signal),
      });
    },
  };
  return { passThrough, release, signals, bodyRead: () => bodyRead };
}

function setup() {
  const upstream = gatedUpstream();
  const service = memoryService({
    renderer: countingRenderer(() => {
      throw new Error('not rendered: POST passes');
    }).renderer,
    passThrough: upstream.passThrough,
  });
  const deps = {
    ...service.originDeps,
    streamPasses: true,
    internalAnswerHeaders: ['x-upstream-tags'],
  };
  const send = (method = 'POST') =>
    servePage(deps, {
      method,
      rawPath: '/form',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
      headers: [['cookie', 'session=viewer']],
    });
  return { ...service, upstream, send };
}

async function* take(stream: AsyncIterable<Uint8Array>) {
  for await (const chunk of stream) yield Buffer.from(chunk).toString();
}

describe('a streamed pass (issue 34)', () => {
  it('decides status and headers before reading the body, which follows as it comes', async () => {
    const ctx = setup();
    const response = await ctx.send();
    expect(ctx.upstream.bodyRead()).toBe(false);
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toMatch(/^private/);
    expect(response.headers['x-upstream-tags']).toBeUndefined();
    expect(response.cookies).toEqual(['a=1']);
    expect(response.body).toBeUndefined();
    const chunks = take(response.stream!);
    expect((await chunks.next()).value).toBe('<p>fallback</p>');
    ctx.upstream.release();
    expect((await chunks.next()).value).toBe('<p>rest</p>');
    expect((await chunks.next()).done).toBe(true);
  });

  it('the pass timeout still bounds the whole answer: past it the body breaks off', async () => {
    const ctx = setup();
    const response = await ctx.send();
    const chunks = take(response.stream!);
    expect((await chunks.next()).value).toBe('<p>fallback</p>');
    const next = chunks.next();
    await ctx.clock.whenSleeping();
    ctx.clock.advanceMs(ctx.originDeps.passTimeoutMs);
    await expect(next).rejects.toMatchObject({ failure: PassFailure.Timeout });
    await expect(next).rejects.toBeInstanceOf(PassThroughError);
    expect(ctx.upstream.signals[0]?.aborted).toBe(true);
  });

  it('HEAD reads nothing to stream; the function writes the prelude alone', async () => {
    const ctx = setup();
    const response = await ctx.send('HEAD');
    expect(response.stream).toBeUndefined();
    const result = toStreamedResult(response, true, () => undefined);
    const chunks: Buffer[] = [];
    for await (const chunk of result.body) chunks.push(Buffer.from(chunk as Uint8Array));
    // One empty write: the runtime writes the prelude on the first write, even with no body.
    expect(chunks).toEqual([Buffer.alloc(0)]);
  });

  it('a body that breaks off is reported once, and the stream ends in error', async () => {
    const broken: unknown[] = [];
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield await Promise.resolve(Buffer.from('a'));
      throw new Error('socket hang up');
    }
    const result = toStreamedResult(
      {
        status: 200,
        headers: {},
        body: undefined,
        stream: failing(),
        decision: 'pass:x',
        cacheKeyHash: undefined,
      },
      false,
      (error) => broken.push(error),
    );
    const read = async () => {
      for await (const chunk of result.body) void chunk;
    };
    await expect(read()).rejects.toThrow('socket hang up');
    expect(broken).toHaveLength(1);
  });
});
