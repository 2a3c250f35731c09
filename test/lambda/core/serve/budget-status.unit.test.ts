/**
 * A stale page served while the budget is spent says so (`detail=budget`) and its intent is still
 * queued; under the budget, fresh, or without one, nothing is added (the negative controls).
 */
import { describe, expect, it } from '@jest/globals';
import { InMemoryRegenerationBudget } from '../../../../lambda/adapters/regeneration-budget/memory.js';
import { budgetWindowOf } from '../../../../lambda/core/page/budget.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import { intentFor, message } from '../../../helpers/worker-harness.js';

async function served(options: { budget?: number; spent?: number; tenant?: string }) {
  const service = memoryService({ renderer: countingRenderer().renderer });
  const budget = new InMemoryRegenerationBudget();
  const deps = {
    ...service.originDeps,
    budget: options.budget === undefined ? undefined : { budget, perMinute: options.budget },
  };
  const get = () =>
    servePage(deps, {
      method: 'GET',
      rawPath: '/p',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    });
  // This minute's count, in the window of the request about to be served.
  const spend = async () => {
    const window = budgetWindowOf(service.clock.seconds);
    for (let i = 0; i < (options.spent ?? 0); i++) await budget.take('', window, 1_000);
  };
  await get();
  await spend();
  const fresh = await get();
  service.clock.advance(61);
  await spend();
  const stale = await get();
  return { fresh, stale, queued: service.queue.drain().length };
}

describe('Cache-Status detail=budget', () => {
  it('is added to a stale page when this minute’s budget is spent, and the intent still queued', async () => {
    const { stale, queued } = await served({ budget: 3, spent: 3 });
    expect(stale.headers['cache-status']).toMatch(
      /^facetheory-isr; fwd=stale; ttl=-?\d+; detail=budget$/,
    );
    expect(stale.detail).toMatchObject({ enqueue: 'enqueued', budget: 'spent' });
    expect(queued).toBe(1);
  });

  it.each([
    ['under the budget', { budget: 3, spent: 2 }],
    ['without a budget', { spent: 5 }],
  ])('negative control: not added %s', async (_, options) => {
    const { stale } = await served(options);
    expect(stale.headers['cache-status']).toMatch(/fwd=stale/);
    expect(stale.headers['cache-status']).not.toMatch(/detail=budget/);
  });

  it('negative control: never on a fresh page', async () => {
    const { fresh } = await served({ budget: 1, spent: 1 });
    expect(fresh.headers['cache-status']).not.toMatch(/detail/);
  });

  it('negative control: not on a page backing off after a failed render (no intent is queued)', async () => {
    const renderer = countingRenderer((_request, call) =>
      call === 1
        ? htmlPage('<p>page</p>', { revalidateSeconds: 60 })
        : htmlPage('down', { status: 500 }),
    ).renderer;
    const service = memoryService({ renderer });
    const budget = new InMemoryRegenerationBudget();
    const deps = { ...service.originDeps, budget: { budget, perMinute: 1 } };
    const request = {
      method: 'GET',
      rawPath: '/p',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    };
    await servePage(deps, request);
    service.clock.advance(61);
    const failed = await processMessage(service.workerDeps, message('m1', intentFor('/p')));
    expect(failed.decision).toBe('render-failed');
    await budget.take('', budgetWindowOf(service.clock.seconds), 1);
    const stale = await servePage(deps, request);
    expect(stale.headers['cache-status']).toMatch(/fwd=stale/);
    expect(stale.headers['cache-status']).not.toMatch(/detail=budget/);
    expect(service.queue.drain()).toEqual([]);
  });
});
