/** The status GET of a revalidation, by effect id, on the in-memory ports. */
import { describe, expect, it } from '@jest/globals';
import { StaticSecretSource } from '../../../../lambda/adapters/secret-source/static.js';
import type { RevalidationStatus } from '../../../../lambda/core/revalidate/ports.js';
import { statusTargetOf } from '../../../../lambda/core/revalidate/revalidation-status.js';
import {
  serveRevalidation,
  type CallerAuth,
} from '../../../../lambda/core/revalidate/serve-revalidation.js';
import { signatureOf } from '../../../../lambda/core/revalidate/webhook-signature.js';
import { memoryRevalidation, revalidateRequest as post } from '../../../helpers/revalidate.js';

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;
const UNKNOWN = `rv_${'0'.repeat(32)}`;

function setup(auth?: CallerAuth) {
  const { deps, service } = memoryRevalidation(auth === undefined ? {} : { auth });
  const cache = (path: string) => {
    const key = service.keyFor(path);
    service.state.metas.set(key.pk, {
      pk: key.pk,
      s3Key: `pages/${key.hash}`,
      generatedAt: service.clock.seconds,
      revalidateSeconds: 60,
      cacheKey: key.key,
    });
  };
  const get = (target: string, headers: Record<string, string> = {}) =>
    serveRevalidation(deps, post('', { method: 'GET', target, headers }));
  return { deps, service, cache, get };
}

describe('revalidation status', () => {
  it('names the effect by the last path segment, locally and on the function URL', () => {
    const id = `rv_${'a1'.repeat(16)}`;
    expect(statusTargetOf(`/_isr/revalidate/${id}`)).toBe(id);
    expect(statusTargetOf(`/${id}?x=1`)).toBe(id);
    expect(statusTargetOf('/_isr/revalidate')).toBeUndefined();
    expect(statusTargetOf(`/${id}x`)).toBeUndefined();
  });

  it('answers the status of an applied revalidation: done, with its counts', async () => {
    const { deps, cache, get } = setup();
    cache('/a');
    const accepted = await serveRevalidation(deps, post({ paths: ['/a', '/b'] }, { key: 'k1' }));
    const effectId = json(accepted.body).effect_id as string;
    const reply = await get(`/_isr/revalidate/${effectId}`);
    expect(reply.status).toBe(200);
    expect(json(reply.body)).toMatchObject({
      effect_id: effectId,
      state: 'done',
      mode: 'stale',
      counts: { pages: 1, marked: 1, regenerations: 0, held: 0 },
      held_pages: [],
    });
    expect(reply.log).toMatchObject({ decision: 'status', effect_id: effectId });
  });

  it('is written before any page is marked, so an in-progress 409 effect id can be followed', async () => {
    const { deps, cache } = setup();
    cache('/a');
    const seen: RevalidationStatus[] = [];
    const statuses = {
      put: (status: RevalidationStatus) => {
        seen.push(status);
        return deps.statuses.put(status);
      },
      get: (id: string) => deps.statuses.get(id),
      expect: deps.statuses.expect.bind(deps.statuses),
    };
    await serveRevalidation({ ...deps, statuses }, post({ paths: ['/a'] }, { key: 'k1' }));
    expect(seen.map((status) => [status.state, status.marked])).toEqual([
      ['marking', 0],
      ['done', 1],
    ]);
  });

  it('answers 404 for an unknown effect id, and 405 still for a GET of the endpoint itself', async () => {
    const { get } = setup();
    const unknown = await get(`/_isr/revalidate/${UNKNOWN}`);
    expect(unknown.status).toBe(404);
    expect(json(unknown.body)).toMatchObject({ error: 'not-found' });
    expect((await get('/_isr/revalidate')).status).toBe(405);
  });

  it('answers 503 when the status cannot be read now', async () => {
    const { deps } = setup();
    const statuses = { ...deps.statuses, get: () => Promise.reject(new Error('throttled')) };
    const reply = await serveRevalidation(
      { ...deps, statuses },
      post('', { method: 'GET', target: `/${UNKNOWN}` }),
    );
    expect(reply.status).toBe(503);
  });

  it('takes the same auth: a signature over one effect status reads no other', async () => {
    const secret = 'status-secret';
    const { get, service } = setup({
      kind: 'hmac',
      secret: new StaticSecretSource(secret),
      skewSeconds: 300,
    });
    const signedFor = (target: string) => ({
      'x-isr-timestamp': String(service.clock.seconds),
      'x-isr-signature': signatureOf(secret, {
        timestamp: String(service.clock.seconds),
        method: 'GET',
        target,
        idempotencyKey: undefined,
        rawBody: '',
      }),
    });
    const mine = `/_isr/revalidate/${UNKNOWN}`;
    expect((await get(mine)).status).toBe(401);
    expect((await get(mine, signedFor(mine))).status).toBe(404);
    const other = `/_isr/revalidate/rv_${'1'.repeat(32)}`;
    const replayed = await get(other, signedFor(mine));
    expect(replayed.status).toBe(401);
    expect(json(replayed.body)).toMatchObject({ reason: 'signature-mismatch' });
  });
});
