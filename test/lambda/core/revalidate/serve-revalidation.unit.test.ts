import { describe, expect, it } from '@jest/globals';
import type { CdnPurge } from '../../../../lambda/core/page/ports.js';
import {
  serveRevalidation,
  type CallerAuth,
} from '../../../../lambda/core/revalidate/serve-revalidation.js';
import { memoryRevalidation, revalidateRequest as post } from '../../../helpers/revalidate.js';

function setup(auth: CallerAuth = { kind: 'open' }) {
  const { service, cdn, deps } = memoryRevalidation({
    auth,
    policy: { keyPolicy: { allowedQueryParams: ['page'] }, maxPaths: 3, maxTags: 2 },
  });
  /** A cached page, fresh for a minute. */
  const cache = (path: string, query = '') => {
    const key = service.keyFor(path, query);
    service.state.metas.set(key.pk, {
      pk: key.pk,
      s3Key: `pages/${key.hash}`,
      generatedAt: service.clock.seconds,
      revalidateSeconds: 60,
      cacheKey: key.key,
    });
    return key;
  };
  return {
    service,
    cdn,
    deps,
    cache,
    call: (request: ReturnType<typeof post>) => serveRevalidation(deps, request),
  };
}

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

describe('serveRevalidation: refusals', () => {
  it('answers 405 to anything but POST', async () => {
    const { call } = setup();
    const reply = await call({ ...post({ paths: ['/a'] }, { key: 'k' }), method: 'GET' });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('POST');
  });

  it('requires an Idempotency-Key, and bounds it', async () => {
    const { call, service } = setup();
    const missing = await call(post({ paths: ['/a'] }));
    expect(missing.status).toBe(400);
    expect(json(missing.body)).toMatchObject({ field: 'Idempotency-Key' });
    expect((await call(post({ paths: ['/a'] }, { key: 'a b' }))).status).toBe(400);
    expect((await call(post({ paths: ['/a'] }, { key: 'k'.repeat(256) }))).status).toBe(400);
    expect((await call(post({ paths: ['/a'] }, { key: 'k'.repeat(255) }))).status).toBe(202);
    expect(service.state.requests.size).toBe(1);
  });

  it.each([
    ['not JSON', '{paths', 'body'],
    ['not an object', '[]', 'body'],
    ['an unknown field', { paths: ['/a'], path: '/b' }, 'path'],
    ['neither paths nor tags', {}, 'paths'],
    ['paths not an array', { paths: '/a' }, 'paths'],
    ['a path that is not a string', { paths: ['/a', 7] }, 'paths[1]'],
    ['a traversal', { paths: ['/a', '/b/../c'] }, 'paths[1]'],
    ['a relative path', { paths: ['a'] }, 'paths[0]'],
    ['a tag with a comma', { tags: ['ok', 'a,b'] }, 'tags[1]'],
    ['a tag with a space', { tags: ['a b'] }, 'tags[0]'],
    ['an empty tag', { tags: [''] }, 'tags[0]'],
    ['an unknown mode', { paths: ['/a'], mode: 'purge' }, 'mode'],
    ['regenerate not a boolean', { paths: ['/a'], regenerate: 'yes' }, 'regenerate'],
    ['a tenant on a single-tenant service', { paths: ['/a'], tenant: 't1' }, 'tenant'],
  ])('answers 400 naming the field for %s, and stores nothing', async (_what, body, field) => {
    const { call, service, cdn } = setup();
    const reply = await call(post(body, { key: 'k1' }));
    expect(reply.status).toBe(400);
    expect(json(reply.body)).toMatchObject({ error: 'invalid-request', field });
    expect(reply.log.decision).toBe('invalid');
    expect(service.state.requests.size).toBe(0);
    expect(cdn.purges).toEqual([]);
  });

  it('answers 413 over the documented limits of paths and of tags', async () => {
    const { call, service } = setup();
    const paths = await call(post({ paths: ['/a', '/b', '/c', '/d'] }, { key: 'k1' }));
    expect(paths.status).toBe(413);
    expect(json(paths.body)).toMatchObject({ error: 'too-large', field: 'paths', limit: 3 });
    const tags = await call(post({ tags: ['a', 'b', 'c'] }, { key: 'k2' }));
    expect(json(tags.body)).toMatchObject({ field: 'tags', limit: 2 });
    expect(
      (await call(post({ paths: ['/a', '/b', '/c'], tags: ['a', 'b'] }, { key: 'k3' }))).status,
    ).toBe(202);
    expect(service.state.requests.size).toBe(1);
  });

  it('in multi-tenant mode requires a served tenant', async () => {
    const { deps } = setup();
    const multi = { ...deps, policy: { ...deps.policy, tenancy: { tenants: ['t1'] } } };
    const none = await serveRevalidation(multi, post({ paths: ['/a'] }, { key: 'k' }));
    expect(json(none.body)).toMatchObject({ field: 'tenant' });
    const other = await serveRevalidation(
      multi,
      post({ paths: ['/a'], tenant: 't2' }, { key: 'k' }),
    );
    expect(json(other.body)).toMatchObject({ field: 'tenant' });
    const ok = await serveRevalidation(multi, post({ paths: ['/a'], tenant: 't1' }, { key: 'k' }));
    expect(ok.status).toBe(202);
  });

  it('under IAM auth, refuses an event that carries no principal, and logs the caller', async () => {
    const { call } = setup({ kind: 'iam' });
    const anonymous = await call(post({ paths: ['/a'] }, { key: 'k' }));
    expect(anonymous.status).toBe(401);
    expect(json(anonymous.body)).toEqual({ error: 'unauthorized', reason: 'no-iam-principal' });
    const arn = 'arn:aws:iam::123456789012:role/cms';
    const signed = await call(post({ paths: ['/a'] }, { key: 'k', principal: arn }));
    expect(signed.status).toBe(202);
    expect(signed.log.caller).toBe(arn);
  });
});

describe('serveRevalidation: the idempotent contract', () => {
  it('applies a new key once and answers 202 with a receipt', async () => {
    const { call, cache, service, cdn } = setup();
    const a = cache('/a');
    const reply = await call(post({ paths: ['/a', '/never'], tags: ['Post:1'] }, { key: 'k1' }));
    expect(reply.status).toBe(202);
    const receipt = json(reply.body);
    expect(receipt).toEqual({
      effect_id: expect.stringMatching(/^rv_[0-9a-f]{32}$/),
      status: 'accepted',
      mode: 'stale',
      regenerate: false,
      tenant: null,
      counts: { paths: 2, tags: 1, pages: 1, regenerations: 0, held: 0 },
      cdn: { status: 'submitted', invalidation_ids: ['I1'] },
    });
    expect(service.state.metas.get(a.pk)?.revalidateSeconds).toBe(0);
    expect(reply.log).toMatchObject({ decision: 'new', idempotency_key: 'k1', caller: 'local' });
    expect(reply.log.effect_id).toBe(receipt.effect_id);
    expect(cdn.purges).toHaveLength(1);
  });

  it('counts held pages in the receipt and lists them with their hold', async () => {
    const { call, cache, service } = setup();
    const a = cache('/a');
    const holdUntil = service.clock.seconds + 300;
    const meta = service.state.metas.get(a.pk);
    if (meta !== undefined) service.state.metas.set(a.pk, { ...meta, holdUntil });
    cache('/b');
    const reply = await call(post({ paths: ['/a', '/b'] }, { key: 'k-held' }));
    const receipt = json(reply.body);
    expect(receipt.counts).toMatchObject({ pages: 2, held: 1 });
    expect(receipt.held_pages).toEqual([{ key: '/a', hold_until: holdUntil }]);
  });

  it('replays the same key and body byte for byte, flagged, without applying again', async () => {
    const { call, cache, cdn } = setup();
    cache('/a');
    const first = await call(post({ paths: ['/a'], tags: ['x'] }, { key: 'k1' }));
    // The same request, written differently: key order, a trailing slash, a duplicate.
    const again = await call(
      post({ tags: ['X'], paths: ['/a/', '/a'], mode: 'stale' }, { key: 'k1' }),
    );
    expect(again.status).toBe(first.status);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.log.decision).toBe('duplicate');
    expect(cdn.purges).toHaveLength(1);
  });

  it('refuses the same key with another body: 409 with a diff, nothing applied', async () => {
    const { call, cache, service, cdn } = setup();
    cache('/a');
    const b = cache('/b');
    await call(post({ paths: ['/a'] }, { key: 'k1' }));
    const reply = await call(post({ paths: ['/b'], mode: 'expire' }, { key: 'k1' }));
    expect(reply.status).toBe(409);
    expect(json(reply.body)).toMatchObject({
      error: 'idempotency-key-reused',
      diff: {
        paths: { stored: ['/a'], received: ['/b'] },
        mode: { stored: 'stale', received: 'expire' },
      },
    });
    expect(Object.keys(json(reply.body).diff as object)).toEqual(['mode', 'paths']);
    expect(reply.log.decision).toBe('conflict');
    expect(service.state.metas.get(b.pk)?.revalidateSeconds).toBe(60);
    expect(cdn.purges).toHaveLength(1);
  });

  it('answers 409 in-progress with a Retry-After as long as the claim can last, naming its effect', async () => {
    const { deps, cache } = setup();
    cache('/a');
    let release: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const slow = {
      ...deps,
      revalidation: {
        ...deps.revalidation,
        cdn: {
          invalidateTags: (): Promise<CdnPurge> => {
            entered();
            return new Promise(
              (resolve) => (release = () => resolve({ status: 'not-configured' })),
            );
          },
        },
      },
    };
    const first = serveRevalidation(slow, post({ paths: ['/a'] }, { key: 'k1' }));
    await inside;
    const second = await serveRevalidation(slow, post({ paths: ['/a'] }, { key: 'k1' }));
    expect(second.status).toBe(409);
    expect(json(second.body)).toMatchObject({
      error: 'in-progress',
      effect_id: expect.stringMatching(/^rv_[0-9a-f]{32}$/),
    });
    // The claim runs out with the invocation (30 s left here), not a second from now.
    expect(second.headers['retry-after']).toBe('30');
    expect(second.log.decision).toBe('in-progress');
    release();
    expect((await first).status).toBe(202);
  });

  it('a failure answers 503 and frees the key: the retry applies it', async () => {
    const { deps, cache } = setup();
    cache('/a');
    let fail = true;
    const flaky = {
      ...deps,
      revalidation: {
        ...deps.revalidation,
        cdn: {
          invalidateTags: (): Promise<CdnPurge> =>
            fail
              ? Promise.reject(new Error('throttled'))
              : Promise.resolve({ status: 'not-configured' }),
        },
      },
    };
    const failed = await serveRevalidation(flaky, post({ paths: ['/a'] }, { key: 'k1' }));
    expect(failed.status).toBe(503);
    expect(failed.headers['retry-after']).toBe('1');
    fail = false;
    const retried = await serveRevalidation(flaky, post({ paths: ['/a'] }, { key: 'k1' }));
    expect(retried.status).toBe(202);
  });

  it('keeps one effect per key: the effect id is the same on every answer for it', async () => {
    const { call } = setup();
    const a = json((await call(post({ paths: ['/a'] }, { key: 'k1' }))).body);
    const b = json((await call(post({ paths: ['/a'] }, { key: 'k2' }))).body);
    const conflict = json((await call(post({ paths: ['/b'] }, { key: 'k1' }))).body);
    expect(a.effect_id).not.toBe(b.effect_id);
    expect(conflict.effect_id).toBe(a.effect_id);
  });

  it('names a new effect when a key is used again after its window: a new CDN purge identity', async () => {
    const { call, service } = setup();
    const first = json((await call(post({ paths: ['/a'] }, { key: 'k1' }))).body);
    expect(json((await call(post({ paths: ['/a'] }, { key: 'k1' }))).body).effect_id).toBe(
      first.effect_id,
    );
    service.clock.advance(7 * 86_400 + 1); // past the key's window: a new claim
    const later = json((await call(post({ paths: ['/a'] }, { key: 'k1' }))).body);
    expect(later.effect_id).toMatch(/^rv_[0-9a-f]{32}$/);
    expect(later.effect_id).not.toBe(first.effect_id);
  });

  it('regenerate: true queues each cached page now', async () => {
    const { call, cache, service } = setup();
    cache('/a');
    const reply = await call(post({ paths: ['/a', '/b'], regenerate: true }, { key: 'k1' }));
    expect(json(reply.body).counts).toMatchObject({ pages: 1, regenerations: 2 });
    expect(service.queue.drain()).toHaveLength(2);
  });
});

describe('serveRevalidation: page addresses, read as the CLI reads them (issue 19, item 18)', () => {
  it.each([
    ['a fragment', '/a#section'],
    ['an absolute URL', 'https://www.example.com/a'],
    ['an absolute URL with a fragment', 'HTTP://example.com:8080/a/#top'],
  ])('marks the page an address with %s names', async (_what, address) => {
    const { call, cache, service } = setup();
    const a = cache('/a');
    const reply = await call(post({ paths: [address] }, { key: 'k1' }));
    expect(reply.status).toBe(202);
    expect(json(reply.body).counts).toMatchObject({ paths: 1, pages: 1 });
    expect(service.state.metas.get(a.pk)?.revalidateSeconds).toBe(0);
  });

  it('keeps the allowed query of an absolute URL, and counts one request for its forms', async () => {
    const { call, cache, service } = setup();
    const page2 = cache('/a', 'page=2');
    const addresses = ['/a?page=2', 'https://example.com/a?utm=x&page=2#c', '/a/?page=2#d'];
    const reply = await call(post({ paths: addresses }, { key: 'k1' }));
    expect(json(reply.body).counts).toMatchObject({ paths: 1, pages: 1 });
    expect(service.state.metas.get(page2.pk)?.revalidateSeconds).toBe(0);
  });

  it.each([
    ['a path without its "/"', 'a#x'],
    ['a host without a scheme', 'example.com/a'],
    ['another scheme', 'ftp://example.com/a'],
    ['a fragment alone', '#a'],
  ])('answers 400 to %s, naming the address', async (_what, address) => {
    const { call, service } = setup();
    const reply = await call(post({ paths: ['/ok', address] }, { key: 'k1' }));
    expect(reply.status).toBe(400);
    expect(json(reply.body)).toMatchObject({ field: 'paths[1]' });
    expect(JSON.stringify(json(reply.body))).toContain(`neither a path starting with`);
    expect(service.state.requests.size).toBe(0);
  });
});
