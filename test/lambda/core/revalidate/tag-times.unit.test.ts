import { describe, expect, it } from '@jest/globals';
import {
  serveRevalidation,
  type CallerAuth,
} from '../../../../lambda/core/revalidate/serve-revalidation.js';
import { isTagTimesTarget } from '../../../../lambda/core/revalidate/tag-times.js';
import { signedHeadersOf } from '../../../../lambda/core/revalidate/webhook-signature.js';
import { StaticSecretSource } from '../../../../lambda/adapters/secret-source/static.js';
import { memoryRevalidation, revalidateRequest as post } from '../../../helpers/revalidate.js';

const TARGET = '/_isr/revalidate/tag-times';

function setup(auth: CallerAuth = { kind: 'open' }, tenancy?: { tenants: string[] }) {
  const { service, deps } = memoryRevalidation({ auth, policy: { maxTags: 3, tenancy } });
  const withTimes = {
    ...deps,
    tagTimes: { reader: service.tagIndex, cacheMs: 250, skewMarginMs: 2_000, keptMs: 604_800_000 },
  };
  const read = (body: unknown, headers: Record<string, string> = {}) =>
    serveRevalidation(withTimes, post(body, { target: TARGET, headers }));
  return { service, deps: withTimes, read };
}

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

describe('POST <revalidate URL>/tag-times', () => {
  it('answers when each tag was last revalidated, and how long the answer may be reused', async () => {
    const { service, read } = setup();
    await service.tagIndex.recordRevalidation(undefined, 'posts', {
      effectId: 'rv_1',
      atMs: 5_000,
    });
    const reply = await read({ tags: ['Posts', 'never'] });
    expect(reply.status).toBe(200);
    expect(json(reply.body)).toEqual({
      revalidated_at_ms: { posts: 5_000 },
      cache_ms: 250,
      skew_margin_ms: 2_000,
      kept_ms: 604_800_000,
    });
    expect(reply.log).toMatchObject({ decision: 'tag-times', counts: { tags: 2 } });
    // A read writes nothing: no REQ# row, no status.
    expect(service.state.requests.size).toBe(0);
  });

  it("reads a tenant's tags only, under the tenancy rule of revalidations", async () => {
    const { service, read } = setup({ kind: 'open' }, { tenants: ['acme', 'globex'] });
    await service.tagIndex.recordRevalidation('acme', 'posts', { effectId: 'rv_1', atMs: 7 });
    expect(json((await read({ tags: ['posts'], tenant: 'acme' })).body)).toMatchObject({
      revalidated_at_ms: { posts: 7 },
    });
    expect(json((await read({ tags: ['posts'], tenant: 'globex' })).body)).toMatchObject({
      revalidated_at_ms: {},
    });
    expect((await read({ tags: ['posts'] })).status).toBe(400);
    expect((await read({ tags: ['posts'], tenant: 'initech' })).status).toBe(400);
  });

  it.each([
    ['no tags', { tags: [] }, 400, 'paths'],
    ['a path', { tags: ['a'], paths: ['/a'] }, 400, 'paths'],
    ['a mode', { tags: ['a'], mode: 'expire' }, 400, 'mode'],
    ['a tag the CDN cannot carry', { tags: ['a b'] }, 400, 'tags[0]'],
    ['more tags than a revalidation takes', { tags: ['a', 'b', 'c', 'd'] }, 413, 'tags'],
  ])('refuses %s, naming the field', async (_, body, status, field) => {
    const reply = await setup().read(body);
    expect(reply.status).toBe(status);
    expect(json(reply.body)).toMatchObject({ field });
  });

  it('is signed like a revalidation: a bad or missing HMAC signature is a 401', async () => {
    const secret = 'k';
    const { read, service } = setup({
      kind: 'hmac',
      secret: new StaticSecretSource(secret),
      skewSeconds: 300,
    });
    const body = JSON.stringify({ tags: ['posts'] });
    const signed = signedHeadersOf(secret, {
      method: 'POST',
      target: TARGET,
      idempotencyKey: undefined,
      rawBody: body,
      nowSeconds: service.clock.seconds,
    });
    expect((await read(body, signed)).status).toBe(200);
    expect((await read(body)).status).toBe(401);
    const other = JSON.stringify({ tags: ['other'] });
    expect((await read(other, signed)).status).toBe(401);
  });

  it('answers 503 with Retry-After when the table cannot be read, never an empty answer', async () => {
    const { deps } = setup();
    const failing = {
      ...deps,
      tagTimes: {
        ...deps.tagTimes,
        reader: { revalidatedAt: () => Promise.reject(new Error('throttled')) },
      },
    };
    const reply = await serveRevalidation(failing, post({ tags: ['posts'] }, { target: TARGET }));
    expect(reply.status).toBe(503);
    expect(reply.headers['retry-after']).toBe('1');
  });

  it('is a 404 where tag times are not served', async () => {
    const { deps } = memoryRevalidation();
    const reply = await serveRevalidation(deps, post({ tags: ['posts'] }, { target: TARGET }));
    expect(reply.status).toBe(404);
  });

  it('is told apart from a revalidation and from a status read by its last segment', () => {
    expect(isTagTimesTarget(TARGET)).toBe(true);
    expect(isTagTimesTarget(`${TARGET}?x=1`)).toBe(true);
    expect(isTagTimesTarget('/_isr/revalidate')).toBe(false);
    expect(isTagTimesTarget('/_isr/revalidate/rv_0123')).toBe(false);
  });
});
