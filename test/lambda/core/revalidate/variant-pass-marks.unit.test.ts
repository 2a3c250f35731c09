/**
 * Issue 33, item 3: a path revalidation says the page changed, so none of its keys keeps a
 * hit-for-pass mark: the page's own and its variants' (an RSC request of a fixed page is cached
 * again at its next request, BEHAVIOUR.md), by the foreground `revalidate` and the 202 alike.
 */
import { describe, expect, it } from '@jest/globals';
import { InMemoryFanOutProgressRows } from '../../../../lambda/adapters/fan-out-progress-rows/memory.js';
import { InMemoryFanOutStarts } from '../../../../lambda/adapters/fan-out-starts/memory.js';
import { InProcessPassThrough } from '../../../../lambda/adapters/pass-through/in-process.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { InMemoryRevalidationsInProgress } from '../../../../lambda/adapters/revalidations-in-progress/memory.js';
import { InMemoryRevalidationStatuses } from '../../../../lambda/adapters/revalidation-statuses/memory.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { RenderResult } from '../../../../lambda/core/page/model.js';
import { acceptRevalidation } from '../../../../lambda/core/revalidate/fan-out.js';
import type { Revalidation } from '../../../../lambda/core/revalidate/model.js';
import {
  revalidate,
  type RevalidationDeps,
} from '../../../../lambda/core/revalidate/revalidation.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';

const keyPolicy = { allowedQueryParams: [], variants: [{ name: 'rsc', values: ['1'] }] };

const privatePage = (): RenderResult => ({
  ...htmlPage('<p>anonymous</p>'),
  headers: { 'cache-control': 'private, no-store' },
});

/** `/isr` and its RSC variant, uncacheable (each marked pass) until `fix()`. */
function setup() {
  let broken = true;
  const counter = countingRenderer(() =>
    broken ? privatePage() : htmlPage('<p>public</p>', { revalidateSeconds: 60 }),
  );
  const passThrough = new InProcessPassThrough(() => ({ status: 200, body: '<p>yours</p>' }));
  const service = memoryService({
    renderer: counter.renderer,
    passThrough,
    hitForPassSeconds: 300,
    keyPolicy,
  });
  const deps: RevalidationDeps = {
    marks: service.marks,
    tagIndex: service.tagRevalidations,
    queue: service.queue,
    cdn: { invalidateTags: () => Promise.resolve({ status: 'submitted', invalidationIds: [] }) },
    clock: service.clock,
    deployId: 'd1',
  };
  const statuses = new InMemoryRevalidationStatuses();
  const background = {
    ...deps,
    inProgress: new InMemoryRevalidationsInProgress(service.state),
    shards: 2,
    progress: new InMemoryFanOutProgressRows(service.state, statuses),
    starts: new InMemoryFanOutStarts(service.state, statuses),
    fanOutQueue: service.queue,
    statuses,
    batchSize: 100,
    inProgressCacheMs: 0,
  };
  const applied = {
    foreground: (r: Revalidation) => revalidate(deps, r),
    background: (r: Revalidation) => acceptRevalidation(background, r),
  };
  const keyOf = (rawPath: string, variantHeaders: Record<string, string> = {}) =>
    normaliseCacheKey({ rawPath, variantHeaders }, keyPolicy);
  const get = (rawPath: string, variantHeaders: Record<string, string> = {}) =>
    servePage(service.originDeps, {
      method: 'GET',
      rawPath,
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
      variantHeaders,
    });
  const pathRevalidation = (rawPath: string): Revalidation => ({
    tenant: undefined,
    keys: [keyOf(rawPath)],
    tags: [],
    mode: 'stale',
    regenerate: false,
    effectId: 'rv_1',
  });
  return { service, applied, keyOf, get, pathRevalidation, fix: () => (broken = false) };
}

describe('a path revalidation and the hit-for-pass marks of its keys', () => {
  it.each(['foreground', 'background'] as const)(
    'clears the marks of the page and of its variants (%s); the fixed variant is cached again',
    async (how) => {
      const ctx = setup();
      for (const path of ['/isr', '/other']) {
        await ctx.get(path);
        await ctx.get(path, { rsc: '1' });
      }
      const passes = ctx.service.state.passes;
      const variant = ctx.keyOf('/isr', { rsc: '1' });
      expect(passes.has(ctx.keyOf('/isr').pk)).toBe(true);
      expect(passes.has(variant.pk)).toBe(true);
      ctx.fix();
      await ctx.applied[how](ctx.pathRevalidation('/isr'));
      expect(passes.has(ctx.keyOf('/isr').pk)).toBe(false);
      expect(passes.has(variant.pk)).toBe(false);
      // Control: another path's page and variant keep theirs.
      expect(passes.has(ctx.keyOf('/other').pk)).toBe(true);
      expect(passes.has(ctx.keyOf('/other', { rsc: '1' }).pk)).toBe(true);
      expect((await ctx.get('/isr', { rsc: '1' })).cacheStatus).not.toBe('PASS');
      expect((await ctx.get('/isr', { rsc: '1' })).cacheStatus).toBe('HIT');
    },
  );
});
