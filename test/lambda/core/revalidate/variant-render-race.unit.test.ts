/**
 * Issue 22: a variant's first-ever render is not in the tag index while it renders, so a path
 * revalidation that lands then marks nothing it holds. The revalidation records its path's
 * variant tag's time, and the render, gaining that tag, compares it with its start: the
 * foreground `revalidate` and the deployed background accept alike (issue 33, item 1).
 */
import { describe, expect, it } from '@jest/globals';
import { InMemoryFanOutProgressRows } from '../../../../lambda/adapters/fan-out-progress-rows/memory.js';
import { InMemoryFanOutStarts } from '../../../../lambda/adapters/fan-out-starts/memory.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { InMemoryRevalidationsInProgress } from '../../../../lambda/adapters/revalidations-in-progress/memory.js';
import { InMemoryRevalidationStatuses } from '../../../../lambda/adapters/revalidation-statuses/memory.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { RenderRequest } from '../../../../lambda/core/regenerate/ports.js';
import { regenerate } from '../../../../lambda/core/regenerate/regenerate.js';
import { acceptRevalidation } from '../../../../lambda/core/revalidate/fan-out.js';
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
  /** The two ways a revalidation is applied: all before the answer, or the deployed 202. */
  const applied = {
    foreground: (r: Revalidation) => revalidate(deps, r),
    background: (r: Revalidation) => acceptRevalidation(background, r),
  };
  return { service, counter, deps, applied, started, release: () => release() };
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
  it.each(['foreground', 'background'] as const)(
    'renders again (%s): the revalidation recorded the time of the path variant tag',
    async (how) => {
      const { service, counter, applied, started, release } = raced();
      const variant = normaliseCacheKey(
        { rawPath: '/isr', variantHeaders: { rsc: '1' } },
        keyPolicy,
      );
      const inFlight = regenerate(service.regenerateDeps, {
        cacheKey: variant,
        need: { kind: 'intent' },
      });
      await started;
      // Nothing is indexed yet: the revalidation marks no page, in the same second as the start.
      expect((await applied[how](pathRevalidation('/isr'))).pages).toBe(0);
      release();
      expect((await inFlight).decision).toBe('new');
      expect(counter.calls).toBe(2); // control: without the variant tag's time, 1 (the stale one)
    },
  );

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
