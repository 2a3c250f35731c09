/**
 * 404 floods stay cheap (issue 36, item 4): a path never published whose render is a small 404
 * is kept in one row and served from it (HIT, then STALE with one intent), never from a body
 * object; a path revalidation deletes it; a larger, tagged or variant 404, or one at a path with
 * META, is published as a page.
 */
import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import type { RenderResult } from '../../../../lambda/core/page/model.js';
import { goneToStore } from '../../../../lambda/core/regenerate/gone.js';
import { admitPage } from '../../../../lambda/core/regenerate/render-policy.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { withOverrides } from '../../../helpers/overrides.js';
import { countingRenderer } from '../../../helpers/renderers.js';

const notFound = (html = '<h1>not here</h1>'): RenderResult =>
  htmlPage(html, { status: 404, revalidateSeconds: 60 });

function setup() {
  let page = notFound();
  const counter = countingRenderer(() => page);
  const service = memoryService({ renderer: counter.renderer });
  const bodyReads: string[] = [];
  const bodies = withOverrides(service.bodies, {
    getBody: (key: string) => (bodyReads.push(key), service.bodies.getBody(key)),
  });
  const deps = { ...service.originDeps, bodies };
  const get = (rawPath = '/nowhere') =>
    servePage(deps, {
      method: 'GET',
      rawPath,
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    });
  return { ...service, counter, bodyReads, get, answer: (next: RenderResult) => (page = next) };
}

describe('a gone path (origin, in memory)', () => {
  it('is rendered once, kept in one row and served from it: no body object, no version', async () => {
    const s = setup();
    const miss = await s.get();
    expect(miss).toMatchObject({ status: 404, decision: 'gone', cacheStatus: 'MISS' });
    expect(s.state.gones.size).toBe(1);
    expect(s.state.metas.size + s.state.versions.size + s.bodies.objects.size).toBe(0);
    const hit = await s.get();
    expect(hit).toMatchObject({ status: 404, cacheStatus: 'HIT' });
    expect(new TextDecoder().decode(hit.body)).toBe('<h1>not here</h1>');
    expect(hit.headers.etag).toBe(miss.headers.etag);
    expect(s.counter.calls).toBe(1);
    expect(s.bodyReads).toEqual([]);
  });

  it('goes stale on its clock like a page: served STALE with one regeneration queued', async () => {
    const s = setup();
    await s.get();
    s.clock.advance(61);
    expect(await s.get()).toMatchObject({ status: 404, cacheStatus: 'STALE' });
    expect(s.queue.messages).toHaveLength(1);
    expect(s.counter.calls).toBe(1);
  });

  it('is deleted by a revalidation of its path: the page published there next is served', async () => {
    const s = setup();
    await s.get();
    s.answer(htmlPage('<p>now here</p>', { revalidateSeconds: 60 }));
    expect(await s.get()).toMatchObject({ status: 404, cacheStatus: 'HIT' });
    expect(await s.marks.clearPass(s.keyFor('/nowhere').pk)).toBe(true);
    expect(await s.get()).toMatchObject({ status: 200, decision: 'new' });
    expect(await s.get()).toMatchObject({ status: 200, cacheStatus: 'HIT' });
  });
});

describe('goneToStore', () => {
  const s = memoryService({ renderer: countingRenderer().renderer });
  const key = s.keyFor('/nowhere');
  const admitted = (page: RenderResult) =>
    admitPage(page, { defaultRevalidateSeconds: 60, maxBodyBytes: 1 << 20 });
  const at = { current: undefined, generatedAt: 1_800_000_000 };
  const deps = { goneInlineMaxBytes: 17 };

  it('keeps a 404 or 410 of at most goneInlineMaxBytes at a path never published', () => {
    expect(goneToStore(deps, key, admitted(notFound()), at)).toMatchObject({ statusCode: 404 });
    const gone = { ...notFound(), status: 410 };
    expect(goneToStore(deps, key, admitted(gone), at)).toMatchObject({ statusCode: 410 });
  });

  it('publishes as a page: one byte more, a tagged 404, a 200, a 404 where META is', () => {
    const page = (extra: Partial<RenderResult>) => admitted({ ...notFound(), ...extra });
    expect(goneToStore(deps, key, admitted(notFound('<h1>not here!</h1>')), at)).toBeUndefined();
    expect(goneToStore(deps, key, page({ tags: ['posts'] }), at)).toBeUndefined();
    expect(goneToStore(deps, key, page({ status: 200 }), at)).toBeUndefined();
    const current = { pk: key.pk, s3Key: 'k', generatedAt: 1, revalidateSeconds: 60, etag: '"e"' };
    expect(goneToStore(deps, key, admitted(notFound()), { ...at, current })).toBeUndefined();
  });
});
