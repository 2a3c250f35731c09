import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import type { CdnPurge } from '../../../lambda/core/page/ports.js';
import { TestClock } from '../../helpers/clock.js';
import { createOriginHarness, type OriginHarness } from '../../helpers/origin-harness.js';
import { countingRenderer } from '../../helpers/renderers.js';
import { createRevalidateHarness } from '../../helpers/revalidate-harness.js';

/** Every page is tagged with its first path segment (`section:<segment>`) and `all`. */
const counter = countingRenderer((request, call) => ({
  ...htmlPage(`<p>${request.cacheKey.key} #${call}</p>`, { revalidateSeconds: 60 }),
  tags: [`section:${request.cacheKey.path.split('/')[1] ?? ''}`],
}));
const clock = new TestClock();
const purges: string[][] = [];
/** While set, a purge waits for it: a request held in the middle of being applied. */
let hold: Promise<void> | undefined;
/** Called when a purge arrives. */
let onPurge: (() => void) | undefined;
const cdn = {
  invalidateTags: async (tags: readonly string[]): Promise<CdnPurge> => {
    purges.push([...tags]);
    onPurge?.();
    if (hold !== undefined) await hold;
    return { status: 'submitted', invalidationIds: [`I${purges.length}`] };
  },
};
let h: OriginHarness;
let rv: ReturnType<typeof createRevalidateHarness>;

beforeAll(async () => {
  h = await createOriginHarness({ renderer: counter.renderer, clock });
  rv = createRevalidateHarness(h, { cdn });
});
afterAll(() => h.destroy());

describe('POST /_isr/revalidate on the local backends: the contract', () => {
  it('400 without an Idempotency-Key, naming it; 400 naming a bad path', async () => {
    const missing = await rv.post({ paths: ['/a'] });
    expect(missing.statusCode).toBe(400);
    expect(missing.json).toMatchObject({ field: 'Idempotency-Key' });
    const traversal = await rv.post({ paths: ['/ok', '/%2e%2e/x'] }, { key: 'bad-path' });
    expect(traversal.statusCode).toBe(400);
    expect(traversal.json).toMatchObject({ field: 'paths[1]' });
    expect(await rv.requestRow('REVALIDATE#_', 'bad-path')).toBeUndefined();
  });

  it("400 for a tag outside CloudFront's rules; 413 over the limit of 100 paths", async () => {
    const tag = await rv.post({ tags: ['x'.repeat(200)] }, { key: 'bad-tag' });
    expect(tag.json).toMatchObject({ field: 'tags[0]' });
    const paths = Array.from({ length: 101 }, (_, i) => `/p${i}`);
    const tooMany = await rv.post({ paths }, { key: 'too-many' });
    expect(tooMany.statusCode).toBe(413);
    expect(tooMany.json).toMatchObject({ field: 'paths', limit: 100 });
  });

  it('a status GET by effect id reads the status row on DynamoDB Local; an unknown id is a 404', async () => {
    await h.invoke('/contract/status');
    const accepted = await rv.post({ paths: ['/contract/status'] }, { key: 'status-1' });
    const effectId = String(accepted.json.effect_id);
    const status = await rv.post('', { method: 'GET', target: `/_isr/revalidate/${effectId}` });
    expect(status.statusCode).toBe(200);
    expect(status.json).toMatchObject({
      effect_id: effectId,
      state: 'done',
      counts: { pages: 1, marked: 1 },
    });
    const unknown = await rv.post('', { method: 'GET', target: `/rv_${'0'.repeat(32)}` });
    expect(unknown.statusCode).toBe(404);
  });

  it('405 for anything but POST', async () => {
    expect((await rv.post('', { method: 'GET', key: 'k' })).statusCode).toBe(405);
  });

  it('202 with a receipt, stored in REQ# (request_hash, the request, the answer); a replay is byte-identical', async () => {
    await h.invoke('/contract/a');
    const first = await rv.post({ paths: ['/contract/a'] }, { key: 'contract-1' });
    expect(first.statusCode).toBe(202);
    expect(first.json).toMatchObject({
      status: 'accepted',
      mode: 'stale',
      counts: { paths: 1, tags: 0, pages: 1, regenerations: 0 },
      cdn: { status: 'submitted' },
    });
    const row = await rv.requestRow('REVALIDATE#_', 'contract-1');
    expect(row?.status?.S).toBe('COMPLETED');
    // Powertools' sha256 of the canonical request, base64 (as the worker's rows).
    expect(row?.request_hash?.S).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(JSON.parse(row?.request?.S ?? '{}')).toEqual({
      mode: 'stale',
      paths: ['/contract/a'],
      regenerate: false,
      tags: [],
      tenant: null,
    });
    const purgesBefore = purges.length;
    const replay = await rv.post({ paths: ['/contract/a/'], mode: 'stale' }, { key: 'contract-1' });
    expect(replay.statusCode).toBe(202);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(purges.length).toBe(purgesBefore);
  });

  it('409 with a diff for the same key and another body, and nothing applied', async () => {
    await h.invoke('/contract/b');
    await h.invoke('/contract/c');
    await rv.post({ paths: ['/contract/b'] }, { key: 'contract-2' });
    const conflict = await rv.post(
      { paths: ['/contract/c'], regenerate: true },
      { key: 'contract-2' },
    );
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json).toMatchObject({
      error: 'idempotency-key-reused',
      diff: {
        paths: { stored: ['/contract/b'], received: ['/contract/c'] },
        regenerate: { stored: false, received: true },
      },
    });
    expect((await h.invoke('/contract/c')).cache).toBe('HIT');
  });

  it('409 in-progress with Retry-After while the first request with the key is applied', async () => {
    let release: () => void = () => undefined;
    hold = new Promise((resolve) => (release = resolve));
    const purging = new Promise<void>((resolve) => (onPurge = resolve));
    const first = rv.post({ tags: ['section:held'] }, { key: 'contract-3' });
    await purging; // the first request is being applied, its key claimed
    onPurge = undefined;
    const second = await rv.post({ tags: ['section:held'] }, { key: 'contract-3' });
    hold = undefined;
    release();
    expect(second.statusCode).toBe(409);
    expect(second.json).toMatchObject({ error: 'in-progress' });
    // The claim lasts as long as the first call's invocation can (30 s left in the harness).
    expect(second.headers['retry-after']).toBe('30');
    expect((await first).statusCode).toBe(202);
  });
});

describe('POST /_isr/revalidate on the local backends: what a viewer sees', () => {
  it('stale: the page is served STALE, then regenerated by the worker', async () => {
    await h.invoke('/modes/stale');
    const reply = await rv.post({ paths: ['/modes/stale'] }, { key: 'mode-stale' });
    expect(reply.statusCode).toBe(202);
    const stale = await h.invoke('/modes/stale');
    expect(stale.cache).toBe('STALE');
    expect(stale.text).toContain('#');
    const renders = counter.callsFor('/modes/stale');
    expect(await rv.work()).toContain('/modes/stale');
    expect(counter.callsFor('/modes/stale')).toBe(renders + 1);
    const fresh = await h.invoke('/modes/stale');
    expect(fresh.cache).toBe('HIT');
    expect(fresh.text).toBe(counter.lastPageFor('/modes/stale'));
  });

  it('expire: the old page is never served again; the next request renders it (MISS)', async () => {
    const old = await h.invoke('/modes/expire');
    await rv.post({ paths: ['/modes/expire'], mode: 'expire' }, { key: 'mode-expire' });
    const next = await h.invoke('/modes/expire');
    expect(next.cache).toBe('MISS');
    expect(next.text).not.toBe(old.text);
  });

  it('regenerate: the pages are queued now, and viewers get the new page without a stale view', async () => {
    await h.invoke('/modes/regen');
    const reply = await rv.post(
      { paths: ['/modes/regen'], regenerate: true },
      { key: 'mode-regen' },
    );
    expect(reply.json).toMatchObject({ counts: { pages: 1, regenerations: 1 } });
    expect(await rv.work()).toContain('/modes/regen');
    const next = await h.invoke('/modes/regen');
    expect(next.cache).toBe('HIT');
    expect(next.text).toBe(counter.lastPageFor('/modes/regen'));
  });

  it('a tag reaches every page carrying it, and purges the CDN by the tenant-scoped tag', async () => {
    await h.invoke('/tagged/one');
    await h.invoke('/tagged/two');
    await h.invoke('/untagged');
    const reply = await rv.post({ tags: ['Section:Tagged'] }, { key: 'tag-1' });
    // The tag is marked in the background: the 202 has marked no page yet, says it is marking,
    // and how many pages it will have marked.
    expect(reply.json).toMatchObject({
      counts: { tags: 1, pages: 0 },
      marking: { tags: 1, expected_pages: 2, expected_exact: true },
    });
    // Where to follow it: the CLI command, with this effect id (issue 35, item 10).
    expect(reply.json.marking).toMatchObject({
      status: `isr revalidate status ${String(reply.json.effect_id)} --wait`,
    });
    expect(purges.at(-1)).toEqual(['_/section:tagged']);
    // Before any batch ran, the origin honours the in-progress tag.
    expect((await h.invoke('/tagged/one')).cache).toBe('STALE');
    expect((await h.invoke('/tagged/two')).cache).toBe('STALE');
    expect((await h.invoke('/untagged')).cache).toBe('HIT');
    // The worker drains the fan-out: both pages marked, the status done.
    await rv.work();
    const effectId = String(reply.json.effect_id);
    const status = await rv.post('', { method: 'GET', target: `/_isr/revalidate/${effectId}` });
    expect(status.json).toMatchObject({
      state: 'done',
      counts: { marked: 2, expected_pages: 2, expected_exact: true },
    });
  });
});

describe('tenant isolation on the local backends', () => {
  let t: OriginHarness;
  let trv: ReturnType<typeof createRevalidateHarness>;
  const tenantEnv = { ISR_TENANT_HEADER: 'x-isr-tenant', ISR_TENANTS: 'tenant-a,tenant-b' };
  const get = (tenant: string, path: string) =>
    t.invoke(path, { headers: { 'x-isr-tenant': tenant } });

  beforeAll(async () => {
    t = await createOriginHarness({ renderer: counter.renderer, clock, env: tenantEnv });
    trv = createRevalidateHarness(t, { cdn, env: tenantEnv });
  });
  afterAll(() => t.destroy());

  it('a tag revalidation in tenant A never touches tenant B', async () => {
    await get('tenant-a', '/news/x');
    await get('tenant-b', '/news/x');
    const reply = await trv.post({ tags: ['section:news'], tenant: 'tenant-a' }, { key: 'iso-1' });
    // Marked in the background: STALE before any batch ran, and still once the worker drained it.
    expect(reply.json).toMatchObject({ tenant: 'tenant-a', counts: { pages: 0 } });
    expect(purges.at(-1)).toEqual(['tenant-a/section:news']);
    expect((await get('tenant-a', '/news/x')).cache).toBe('STALE');
    expect((await get('tenant-b', '/news/x')).cache).toBe('HIT');
    await trv.work();
    const status = await trv.post('', {
      method: 'GET',
      target: `/_isr/revalidate/${String(reply.json.effect_id)}`,
    });
    expect(status.json).toMatchObject({ state: 'done', counts: { marked: 1 } });
    expect((await get('tenant-b', '/news/x')).cache).toBe('HIT');
  });

  it('keys are per tenant: the same key in tenant B is a request of its own', async () => {
    const a = await trv.post({ paths: ['/news/x'], tenant: 'tenant-a' }, { key: 'iso-2' });
    const b = await trv.post({ paths: ['/news/x'], tenant: 'tenant-b' }, { key: 'iso-2' });
    expect(b.statusCode).toBe(202);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json.effect_id).not.toBe(a.json.effect_id);
    expect(await trv.requestRow('REVALIDATE#tenant-b', 'iso-2')).toBeDefined();
  });

  it('requires a tenant served here', async () => {
    expect((await trv.post({ paths: ['/x'] }, { key: 'iso-3' })).json).toMatchObject({
      field: 'tenant',
    });
    expect(
      (await trv.post({ paths: ['/x'], tenant: 'tenant-c' }, { key: 'iso-3' })).json,
    ).toMatchObject({ field: 'tenant' });
  });
});
