import { describe, expect, it } from '@jest/globals';
import {
  InProcessPassThrough,
  type InProcessUpstream,
} from '../../../../lambda/adapters/pass-through/in-process.js';
import type { PassThrough } from '../../../../lambda/core/serve/ports.js';
import type { RenderResult } from '../../../../lambda/core/page/model.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import type { PageRequest } from '../../../../lambda/core/serve/request.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';

const privatePage = (): RenderResult => ({
  status: 200,
  contentType: 'text/html',
  body: new TextEncoder().encode('<p>anonymous render</p>'),
  headers: { 'cache-control': 'private, no-cache, no-store' },
});

const echo: InProcessUpstream = (request) => ({
  status: request.method === 'POST' ? 303 : 200,
  headers: [
    ['content-type', 'text/html'],
    ['set-cookie', 'a=1'],
    ['set-cookie', 'b=2'],
    ['cache-control', 'private, no-store'],
    ...(request.method === 'POST' ? [['location', '/thanks'] as const] : []),
  ],
  body: `<p>${request.method} ${request.path}?${request.query} ${
    request.headers.find(([name]) => name === 'cookie')?.[1] ?? 'no cookie'
  } ${new TextDecoder().decode(request.body)}</p>`,
});

function setup(options: { passThrough?: PassThrough | null; page?: () => RenderResult } = {}) {
  const counter = countingRenderer(options.page ?? privatePage);
  const passThrough = new InProcessPassThrough(echo, 16);
  const service = memoryService({
    renderer: counter.renderer,
    passThrough: options.passThrough === null ? undefined : (options.passThrough ?? passThrough),
  });
  const send = (extra: Partial<PageRequest>) =>
    servePage(service.originDeps, {
      method: 'GET',
      rawPath: '/p',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
      headers: [['cookie', 'session=viewer']],
      ...extra,
    });
  const text = (body: Uint8Array | undefined) => new TextDecoder().decode(body);
  return { ...service, counter, passThrough, send, text };
}

describe('pass-through in the origin (unit, in-memory ports)', () => {
  it("passes another method with the viewer's cookies and body; nothing rendered or stored", async () => {
    const ctx = setup();
    const response = await ctx.send({
      method: 'POST',
      rawQueryString: 'x=1',
      body: new TextEncoder().encode('a=1'),
    });
    expect(response.status).toBe(303);
    expect(response.headers.location).toBe('/thanks');
    expect(response.cookies).toEqual(['a=1', 'b=2']);
    expect(ctx.text(response.body)).toBe('<p>POST /p?x=1 session=viewer a=1</p>');
    expect(response.headers['x-isr-cache']).toBe('PASS');
    expect(response.headers['cache-status']).toBe('facetheory-isr; fwd=method; detail=method');
    expect(ctx.counter.calls).toBe(0);
    expect(ctx.state.metas.size).toBe(0);
  });

  it('answers 405 for another method when there is no upstream to pass to (the demo)', async () => {
    const ctx = setup({ passThrough: null });
    const response = await ctx.send({ method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });

  it('gives the viewer a pass-through of their own request when the render is private, not a 502', async () => {
    const ctx = setup();
    const response = await ctx.send({});
    expect(response.status).toBe(200);
    expect(ctx.text(response.body)).toBe('<p>GET /p? session=viewer </p>');
    expect(response.headers['cache-status']).toBe('facetheory-isr; fwd=bypass; detail=uncacheable');
    expect(response.cacheKeyHash).toBeDefined();
    // The render ran (without the cookie: the port has no place for it); nothing is stored.
    expect(ctx.counter.calls).toBe(1);
    expect(ctx.state.metas.size).toBe(0);
    expect(ctx.bodies.objects.size).toBe(0);
  });

  it('is the 502 refused:uncacheable of before without an upstream (control)', async () => {
    const ctx = setup({ passThrough: null });
    const response = await ctx.send({});
    expect(response.status).toBe(502);
    expect(response.decision).toBe('refused:uncacheable');
  });

  it('sends HEAD without a body', async () => {
    const ctx = setup();
    const response = await ctx.send({ method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.body).toBeUndefined();
  });

  it('answers 413 with its reason for a body over the limit, and the upstream never sees it', async () => {
    const ctx = setup();
    const response = await ctx.send({ method: 'POST', body: new Uint8Array(17) });
    expect(response.status).toBe(413);
    expect(JSON.parse(ctx.text(response.body))).toMatchObject({ error: 'body-too-large' });
    expect(ctx.passThrough.seen).toHaveLength(0);
  });

  it('answers 504 once the pass timeout is up on the clock, apart from the render timeout', async () => {
    const hanging: PassThrough = {
      forward: (request) =>
        new Promise((_resolve, reject) =>
          request.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        ),
    };
    const ctx = setup({ passThrough: hanging });
    const pending = ctx.send({ method: 'POST' });
    await ctx.clock.whenSleeping();
    ctx.clock.advanceMs(ctx.originDeps.passTimeoutMs - 1);
    expect(ctx.clock.sleeping).toBe(1); // not yet
    ctx.clock.advanceMs(1);
    const response = await pending;
    expect(response.status).toBe(504);
    expect(response.decision).toBe('pass:pass-timeout');
  });
});

describe('the tenant of a pass-through (issue 31, fix 9)', () => {
  /** An upstream that says which tenant it was asked for. */
  const tenantEcho: InProcessUpstream = (request) => ({
    status: 200,
    headers: [['content-type', 'text/plain']],
    body:
      request.headers
        .filter(([name]) => name === 'x-tenant')
        .map(([, value]) => value)
        .join('|') || 'none',
  });
  const send = (tenant: string | undefined, headers: [string, string][]) => {
    const service = memoryService({
      renderer: countingRenderer(privatePage).renderer,
      passThrough: new InProcessPassThrough(tenantEcho, 16),
    });
    const deps = { ...service.originDeps, tenancy: { header: 'x-tenant' } };
    return servePage(deps, {
      method: 'POST',
      rawPath: '/form',
      rawQueryString: '',
      tenant,
      ifNoneMatch: undefined,
      headers,
    });
  };
  const text = (body: Uint8Array | undefined) => new TextDecoder().decode(body);

  it('sends the validated tenant once, whatever copies the viewer sent', async () => {
    const response = await send('acme', [
      ['x-tenant', 'acme'],
      ['x-tenant', 'globex'],
    ]);
    expect(text(response.body)).toBe('acme');
  });

  it('refuses a pass without a valid tenant, as a page is refused (fails closed)', async () => {
    expect((await send(undefined, [])).status).toBe(400);
    expect((await send('not a tenant!', [['x-tenant', 'not a tenant!']])).status).toBe(400);
  });
});
