/**
 * Catching up on deferred intents: within each scope's room this window, oldest first, one
 * message per row and window however many runs, and a row that holds no intent is not kept.
 */
import { describe, expect, it, jest } from '@jest/globals';
import type { ScheduledEvent } from 'aws-lambda';
import { InMemoryRegenerationBudget } from '../../../../lambda/adapters/regeneration-budget/memory.js';
import { InMemoryRegenerationQueue } from '../../../../lambda/adapters/regeneration-queue/memory.js';
import { budgetWindowOf, type DeferredIntent } from '../../../../lambda/core/page/budget.js';
import { encodeIntent } from '../../../../lambda/core/page/intent.js';
import { resumeDeferred } from '../../../../lambda/core/operate/resume-deferred.js';
import type { SweepDeps } from '../../../../lambda/core/operate/sweep.js';
import { createObservability } from '../../../../lambda/shared/observability.js';
import {
  createSweeperHandler,
  DEFERRED_ONLY_INPUT,
  SweeperMetric,
} from '../../../../lambda/sweeper/handler.js';
import { TestClock } from '../../../helpers/clock.js';
import { fixedContext } from '../../../helpers/memory-service.js';

const row = (path: string, at: number, tenant?: string): DeferredIntent => ({
  pk: tenant === undefined ? `CACHE#${path}` : `TENANT#${tenant}#CACHE#${path}`,
  scope: tenant ?? '',
  body: encodeIntent({ v: 1, path, query: '', deployId: 'd1', tenant }),
  explicit: true,
  deferredAt: at,
});

function setup(perMinute: number) {
  const clock = new TestClock();
  const budget = new InMemoryRegenerationBudget();
  const queue = new InMemoryRegenerationQueue();
  const resume = () => resumeDeferred({ budget, perMinute, queue, clock });
  return { clock, budget, queue, resume, window: budgetWindowOf(clock.seconds) };
}

describe('resumeDeferred', () => {
  it('re-queues within each scope’s room this window, oldest first', async () => {
    const { budget, queue, resume, window } = setup(2);
    await budget.take('a', window, 2);
    await budget.take('a', window, 2);
    await budget.take('', window, 2);
    for (const entry of [row('/3', 3), row('/1', 1), row('/2', 2), row('/a', 1, 'a')]) {
      await budget.defer(entry);
    }
    expect(await resume()).toEqual({ requeued: 1, waiting: 3, unreadable: [] });
    expect(queue.drain().map((q) => q.intent.path)).toEqual(['/1']);
    expect((await budget.deferred(10)).map((r) => r.pk)).toEqual([
      'CACHE#/2',
      'CACHE#/3',
      'TENANT#a#CACHE#/a',
    ]);
  });

  it('sends one message per row and window, however many runs', async () => {
    const { budget, queue, clock, resume } = setup(5);
    await budget.defer(row('/x', 1));
    const deferred = await budget.deferred(1);
    await resume();
    // The row comes back as it was (a crash after the send): the second send is deduplicated.
    for (const entry of deferred) await budget.defer(entry);
    await resume();
    expect(queue.drain()).toHaveLength(1);
    clock.advance(60);
    for (const entry of deferred) await budget.defer(entry);
    await resume();
    expect(queue.drain()).toHaveLength(1);
  });

  it('reports and forgets a row that holds no intent', async () => {
    const { budget, queue, resume } = setup(5);
    await budget.defer({ ...row('/bad', 1), body: '{"v":2}' });
    expect(await resume()).toEqual({ requeued: 0, waiting: 0, unreadable: ['CACHE#/bad'] });
    expect(queue.drain()).toEqual([]);
    expect(await budget.deferred(10)).toEqual([]);
  });
});

describe('the sweeper’s minute run (deferred intents only)', () => {
  it('re-queues deferred intents and counts them, and touches no other part', async () => {
    const { budget, queue, clock } = setup(5);
    await budget.defer(row('/y', 1));
    const tasks = jest.fn();
    const deps = {
      tasks: { index: { readShard: tasks }, clock, pageLimit: 1 },
      orphans: {},
      resumeDeferred: () => resumeDeferred({ budget, perMinute: 5, queue, clock }),
    } as unknown as SweepDeps;
    const { logger, metrics } = createObservability('sweeper');
    const add = jest.spyOn(metrics, 'addMetric');
    const handler = createSweeperHandler({ deps, logger, metrics });
    await handler(
      { ...DEFERRED_ONLY_INPUT } as unknown as ScheduledEvent,
      fixedContext(60_000, 'isr-sweeper'),
    );
    expect(tasks).not.toHaveBeenCalled();
    expect(queue.drain()).toHaveLength(1);
    const counted = (name: string) => add.mock.calls.find(([called]) => called === name)?.[2];
    expect(counted(SweeperMetric.DeferredIntentsResumed)).toBe(1);
    expect(counted(SweeperMetric.DeferredIntentsWaiting)).toBe(0);
    expect(counted(SweeperMetric.MissingTasks)).toBeUndefined();
  });
});
