/**
 * The regeneration budget under a storm of intents, on the clock port: 1,000 intents for 200
 * pages within one minute against a budget of 50 render at most 50 in that minute; the rest are
 * deferred (one row per page), caught up window by window, and none is dropped.
 */
import { describe, expect, it } from '@jest/globals';
import { InMemoryRegenerationBudget } from '../../../../lambda/adapters/regeneration-budget/memory.js';
import { epochSeconds } from '../../../../lambda/core/clock.js';
import { budgetWindowOf } from '../../../../lambda/core/page/budget.js';
import { encodeIntent } from '../../../../lambda/core/page/intent.js';
import { resumeDeferred } from '../../../../lambda/core/operate/resume-deferred.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import type { WorkerDeps } from '../../../../lambda/core/worker/deps.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import { intentFor, message } from '../../../helpers/worker-harness.js';

const PAGES = 200;
const INTENTS_PER_PAGE = 5;
const BUDGET = 50;
const paths = Array.from({ length: PAGES }, (_, i) => `/p/${i}`);

/** 200 published pages, all stale by the storm, which starts on a window's first second. */
async function stalePages(perMinute: number | undefined) {
  const counter = countingRenderer();
  const service = memoryService({ renderer: counter.renderer });
  const budget = new InMemoryRegenerationBudget();
  for (const [i, path] of paths.entries()) {
    await processMessage(service.workerDeps, message(`seed-${i}`, intentFor(path)));
  }
  service.clock.advance(120);
  const deps: WorkerDeps =
    perMinute === undefined
      ? service.workerDeps
      : { ...service.workerDeps, budget: { budget, perMinute } };
  const seeded = new Map(
    await Promise.all(
      paths.map(
        async (path) =>
          [path, (await service.cacheTable.getMeta(service.keyFor(path).pk))?.generatedAt] as const,
      ),
    ),
  );
  return { service, counter, budget, deps, seeded, rendersBefore: counter.calls };
}

/** Each page's stale intent, five times over (five stale hits in five dedupe windows). */
function storm(seeded: ReadonlyMap<string, number | undefined>) {
  return Array.from({ length: INTENTS_PER_PAGE }, (_, round) =>
    paths.map((path, i) =>
      message(
        `storm-${round}-${i}`,
        intentFor(path, { observedGeneratedAt: seeded.get(path) ?? 0 }),
      ),
    ),
  ).flat();
}

/** Delivers messages ten at a time, as a batch of the event source runs them. */
async function deliver(deps: WorkerDeps, messages: readonly ReturnType<typeof message>[]) {
  const decisions: string[] = [];
  for (let i = 0; i < messages.length; i += 10) {
    const batch = messages.slice(i, i + 10);
    const reports = await Promise.all(batch.map((m) => processMessage(deps, m)));
    decisions.push(...reports.map((report) => report.decision));
  }
  return decisions;
}

describe('the regeneration budget (unit, in-memory ports, test clock)', () => {
  it('holds under a storm, defers and coalesces the rest, and catches up in later windows', async () => {
    const { service, counter, budget, deps, seeded, rendersBefore } = await stalePages(BUDGET);
    const stormWindow = budgetWindowOf(epochSeconds(service.clock));
    const decisions = await deliver(deps, storm(seeded));
    expect(budgetWindowOf(epochSeconds(service.clock))).toBe(stormWindow);
    expect(counter.calls - rendersBefore).toBe(BUDGET);
    expect(await budget.count('', stormWindow)).toBe(BUDGET);
    // Every other intent was either answered by a page rendered this minute or deferred.
    const deferredDecisions = decisions.filter((d) => d === 'deferred').length;
    expect(deferredDecisions).toBe((PAGES - BUDGET) * INTENTS_PER_PAGE);
    expect(decisions.filter((d) => d === 'fresh')).toHaveLength(BUDGET * (INTENTS_PER_PAGE - 1));
    // Coalesced: 750 deferred intents are 150 rows, one per page.
    expect(await budget.deferred(1_000)).toHaveLength(PAGES - BUDGET);
    // What it wrote (PERFORMANCE.md): one ADD per intent that would render (800: the other 200
    // found their page fresh), refused or not, and one deferred row per refusal (750).
    expect(budget.writes).toBe(800 + 750);

    const perWindow: number[] = [];
    for (let window = 1; window <= 4; window++) {
      service.clock.advance(60);
      const before = counter.calls;
      const resumed = await resumeDeferred({
        budget,
        perMinute: BUDGET,
        queue: service.queue,
        clock: service.clock,
      });
      expect(resumed.unreadable).toEqual([]);
      const queued = service.queue.drain();
      await deliver(
        deps,
        queued.map((q, i) => message(`resumed-${window}-${i}`, encodeIntent(q.intent))),
      );
      perWindow.push(counter.calls - before);
    }
    expect(perWindow).toEqual([50, 50, 50, 0]);
    expect(perWindow.every((renders) => renders <= BUDGET)).toBe(true);
    // None dropped: every page has a generation newer than the one the storm saw.
    for (const path of paths) {
      const meta = await service.cacheTable.getMeta(service.keyFor(path).pk);
      expect(meta?.generatedAt).toBeGreaterThan(seeded.get(path) ?? Infinity);
      expect(counter.callsFor(path)).toBe(2);
    }
    expect(await budget.deferred(1_000)).toEqual([]);
  });

  it('negative control: without a budget the storm renders every page in its minute', async () => {
    const { counter, deps, seeded, rendersBefore } = await stalePages(undefined);
    const decisions = await deliver(deps, storm(seeded));
    expect(counter.calls - rendersBefore).toBe(PAGES);
    expect(decisions).not.toContain('deferred');
  });

  it('negative control: a budget above the storm defers nothing', async () => {
    const { counter, budget, deps, seeded, rendersBefore } = await stalePages(PAGES);
    await deliver(deps, storm(seeded));
    expect(counter.calls - rendersBefore).toBe(PAGES);
    expect(await budget.deferred(1_000)).toEqual([]);
  });

  it('keeps a revalidation’s intent over a stale hit’s for the same page', async () => {
    const { service, budget, deps, seeded } = await stalePages(1);
    await processMessage(deps, message('first', intentFor(paths[0] ?? '')));
    const explicit = intentFor(paths[1] ?? '', { purge: { effectId: 'e1' } });
    await processMessage(deps, message('explicit', explicit));
    const stale = intentFor(paths[1] ?? '', { observedGeneratedAt: seeded.get(paths[1] ?? '') });
    await processMessage(deps, message('stale', stale));
    const [row] = await budget.deferred(10);
    expect(row).toMatchObject({ pk: service.keyFor(paths[1] ?? '').pk, body: explicit });
  });
});
