/**
 * Issue 22: a variant's first-ever render is not in the tag index while it renders, so a path
 * revalidation that lands then marks nothing it holds. The revalidation records its path's
 * variant tag's time, and the render, gaining that tag, compares it with its start.
 */
import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { RenderRequest } from '../../../../lambda/core/regenerate/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import {
  revalidate,
  type RevalidationDeps,
} from '../../../../lambda/core/revalidate/revalidation.js';
import type { Revalidation } from '../../../../lambda/core/revalidate/model.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';

const keyPolicy = { allowedQueryParams: [], variants: [{ name: 'rsc', values: ['1'] }] };

/** A variant whose first render pauses until `release()`, so a revalidation lands mid-render. */
function raced() {
  let release: () => void = () => undefined;
  let rendering: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (rendering = resolve));
  const paused = new Promise<void>((resolve) => (release = resolve));
  const counter = countingRenderer(async (_request: RenderRequest, call) => {
    if (call === 1) {
      rendering();
      await paused;
    }
    return htmlPage(`<p>render #${call}</p>`, { revalidateSeconds: 60 });
  });
  const service = memoryService({ renderer: counter.renderer, keyPolicy });
  const deps: RevalidationDeps = {
    marks: service.marks,
    tagIndex: service.tagIndex,
    queue: service.queue,
    cdn: { invalidateTags: () => Promise.resolve({ status: 'submitted', invalidationIds: [] }) },
    clock: service.clock,
    deployId: 'd1',
  };
  return { service, counter, deps, started, release: () => release() };
}

const pathRevalidation = (rawPath: string): Revalidation => ({
  tenant: undefined,
  keys: [normaliseCacheKey({ rawPath }, keyPolicy)],
  tags: [],
  mode: 'expire',
  regenerate: false,
  effectId: 'rv_1',
});

describe('a variant rendered for the first time during a path revalidation', () => {
  it('renders again: the revalidation recorded the time of the path variant tag', async () => {
    const { service, counter, deps, started, release } = raced();
    const variant = normaliseCacheKey({ rawPath: '/isr', variantHeaders: { rsc: '1' } }, keyPolicy);
    const inFlight = regenerate(service.regenerateDeps, {
      cacheKey: variant,
      need: { kind: 'intent' },
    });
    await started;
    // Nothing is indexed yet: the revalidation marks no page, in the same second as the start.
    expect((await revalidate(deps, pathRevalidation('/isr'))).pages).toBe(0);
    release();
    expect((await inFlight).decision).toBe('new');
    expect(counter.calls).toBe(2); // control: without the variant tag's time, 1 (the stale one)
  });

  it('a revalidation of another path leaves the render alone (control)', async () => {
    const { service, counter, deps, started, release } = raced();
    const variant = normaliseCacheKey({ rawPath: '/isr', variantHeaders: { rsc: '1' } }, keyPolicy);
    const inFlight = regenerate(service.regenerateDeps, {
      cacheKey: variant,
      need: { kind: 'intent' },
    });
    await started;
    await revalidate(deps, pathRevalidation('/other'));
    release();
    expect((await inFlight).decision).toBe('new');
    expect(counter.calls).toBe(1);
  });
});
