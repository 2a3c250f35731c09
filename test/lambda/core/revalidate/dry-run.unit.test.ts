/**
 * A revalidation previewed (issue 36, item 3): what it would mark, purge and cost, signed like
 * any revalidation, rate limited on the clock port, and never writing: every port call counted.
 */
import { describe, expect, it } from '@jest/globals';
import { StaticSecretSource } from '../../../../lambda/adapters/secret-source/static.js';
import {
  serveRevalidation,
  type RevalidateServiceDeps,
} from '../../../../lambda/core/revalidate/serve-revalidation.js';
import { signedHeadersOf } from '../../../../lambda/core/revalidate/webhook-signature.js';
import { memoryRevalidation, revalidateRequest as post } from '../../../helpers/revalidate.js';

/** `port` with each method call recorded in `calls` as `name.method`. */
function counted<T extends object>(port: T, name: string, calls: string[]): T {
  return new Proxy(port, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(`${name}.${String(property)}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

async function setup(auth?: RevalidateServiceDeps['auth']) {
  const { deps, service } = memoryRevalidation(auth === undefined ? {} : { auth });
  for (let page = 0; page < 3; page++)
    await service.tagIndex.add(undefined, `CACHE#p${page}`, ['posts']);
  await service.tagIndex.add(undefined, 'CACHE#home', ['home']);
  const calls: string[] = [];
  const r = deps.revalidation;
  const countedDeps: RevalidateServiceDeps = {
    ...deps,
    revalidation: {
      ...r,
      marks: counted(r.marks, 'marks', calls),
      tagIndex: counted(r.tagIndex, 'tagIndex', calls),
      queue: counted(r.queue, 'queue', calls),
      cdn: counted(r.cdn, 'cdn', calls),
    },
    statuses: counted(deps.statuses, 'statuses', calls),
    idempotency: { ...deps.idempotency, store: counted(deps.idempotency.store, 'requests', calls) },
  };
  let keys = 0;
  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    serveRevalidation(countedDeps, post(body, { key: `k${++keys}`, headers }));
  return { service, calls, send };
}

describe('a revalidation dry run', () => {
  it('answers pages per tag, CDN items and expected writes, and reads only the tag counts', async () => {
    const { calls, send, service } = await setup();
    const answer = await send({
      tags: ['posts', 'home'],
      paths: ['/about'],
      regenerate: true,
      dry_run: true,
    });
    expect(answer.status).toBe(200);
    expect(answer.log.decision).toBe('dry-run');
    const preview = JSON.parse(answer.body) as Record<string, unknown>;
    expect(preview).toMatchObject({
      dry_run: true,
      pages: {
        paths: 1,
        tags: [
          { tag: 'home', pages: 1, exact: true },
          { tag: 'posts', pages: 3, exact: true },
        ],
        total: 5,
      },
      cdn: { cloudfront_paths: 3 },
      expected: {
        mark_wcu: 7,
        regenerations: 5,
        regeneration_wcu: { changed: 50, unchanged: 25 },
        cloudfront_paths: 3,
      },
    });
    expect(calls).toEqual(['tagIndex.countPages', 'tagIndex.countPages']);
    expect(service.queue.messages).toHaveLength(0);
    expect(service.state.requests.size).toBe(0);
    // The same request without dry_run applies it: the counted ports see the writes.
    expect((await send({ tags: ['posts'] })).status).toBe(202);
    expect(calls.some((call) => call.startsWith('marks.'))).toBe(true);
  });

  it('is refused as any request is: a dry_run that is not a boolean is a 400', async () => {
    const { send } = await setup();
    const answer = await send({ tags: ['posts'], dry_run: 'yes' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ field: 'dry_run' });
  });

  it('is signed like any revalidation: unsigned, a 401 before anything is read', async () => {
    const secret = 'dry-secret';
    const { send, calls, service } = await setup({
      kind: 'hmac',
      secret: new StaticSecretSource(secret),
      skewSeconds: 300,
    });
    const body = { tags: ['posts'], dry_run: true };
    expect((await send(body)).status).toBe(401);
    expect(calls).toEqual([]);
    const signed = signedHeadersOf(secret, {
      method: 'POST',
      target: '/_isr/revalidate',
      idempotencyKey: 'k2',
      rawBody: JSON.stringify(body),
      nowSeconds: service.clock.seconds,
    });
    expect((await send(body, signed)).status).toBe(200);
  });

  it('has a rate limit: ten a minute a tenant, then a 429 with Retry-After until the minute ends', async () => {
    const { send, service, calls } = await setup();
    service.clock.advanceMs(60_000 - (service.clock.now() % 60_000) + 15_000);
    for (let run = 0; run < 10; run++) {
      expect((await send({ tags: ['posts'], dry_run: true })).status).toBe(200);
    }
    const limited = await send({ tags: ['posts'], dry_run: true });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('45');
    expect(calls).toHaveLength(10);
    service.clock.advance(45);
    expect((await send({ tags: ['posts'], dry_run: true })).status).toBe(200);
  });
});
