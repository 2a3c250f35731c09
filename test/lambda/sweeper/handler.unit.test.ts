import { describe, expect, it, jest } from '@jest/globals';
import type { ScheduledEvent } from 'aws-lambda';
import { IndexedStatus, statusShardOf } from '../../../lambda/core/page/rows.js';
import type { SweepDeps } from '../../../lambda/core/operate/sweep.js';
import { createObservability } from '../../../lambda/shared/observability.js';
import { createSweeperHandler, SweeperMetric } from '../../../lambda/sweeper/handler.js';
import { TestClock } from '../../helpers/clock.js';
import { InMemorySweepCursor } from '../../../lambda/adapters/sweep-cursor/memory.js';
import { InMemoryBodyListing } from '../../../lambda/adapters/body-listing/memory.js';
import { InMemoryBodyReferences } from '../../../lambda/adapters/body-references/memory.js';
import { MemoryTable } from '../../../lambda/adapters/shared/memory-table.js';
import { InMemoryStatusIndex } from '../../../lambda/adapters/status-index-reader/memory.js';
import { fixedContext } from '../../helpers/memory-service.js';

const clock = new TestClock();
const event = {} as ScheduledEvent;

function setup(overrides: Partial<SweepDeps> = {}) {
  const index = new InMemoryStatusIndex();
  const deps: SweepDeps = {
    tasks: { index, clock, pageLimit: 10 },
    orphans: {
      listing: new InMemoryBodyListing(),
      references: new InMemoryBodyReferences(new MemoryTable()),
      cursor: new InMemorySweepCursor(),
      bodies: { deleteBody: () => Promise.resolve() },
      clock,
      bodyKeyPrefix: 'pages/',
      orphanAgeSeconds: 3_600,
      listLimit: 10,
    },
    ...overrides,
  };
  const { logger, metrics } = createObservability('sweeper');
  const add = jest.spyOn(metrics, 'addMetric');
  const added = {
    get: (name: string) => add.mock.calls.find(([called]) => called === name)?.[2],
    has: (name: string) => add.mock.calls.some(([called]) => called === name),
  };
  const warn = jest.spyOn(logger, 'warn');
  const handler = createSweeperHandler({ deps, logger, metrics });
  return { index, handler, added, warn };
}

describe('the sweeper handler', () => {
  it('emits every count, zeros included, so the alarms always have data', async () => {
    const { handler, added, warn } = setup();
    await handler(event, fixedContext(60_000, 'isr-sweeper'));
    for (const name of [
      'MissingTasks',
      'FailedTasks',
      'AbandonedLeases',
      'StartedNotCompleted',
      SweeperMetric.UnlistedVersionsDeleted,
    ])
      expect(added.get(name)).toBe(0);
    expect(warn).not.toHaveBeenCalled();
  });

  it('logs the affected keys in one line when something needs an operator', async () => {
    const { index, handler, added, warn } = setup();
    const pk = 'CACHE#late';
    index.add(statusShardOf(IndexedStatus.Started, pk), { pk, sk: 'REQ#k', at: clock.seconds - 1 });
    await handler(event, fixedContext(60_000, 'isr-sweeper'));
    expect(added.get(SweeperMetric.MissingTasks)).toBe(1);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[1]).toMatchObject({ missing: [{ pk, sk: 'REQ#k' }] });
  });

  it('reports the other parts, then fails the invocation, when one part fails', async () => {
    const failing = () => Promise.reject(new Error('purge queue unreachable'));
    const { handler, added } = setup({ flushPendingPurges: failing });
    await expect(handler(event, fixedContext(60_000, 'isr-sweeper'))).rejects.toThrow(
      'purge queue unreachable',
    );
    expect(added.get(SweeperMetric.FailedTasks)).toBe(0);
    expect(added.has(SweeperMetric.PendingPurgesFlushed)).toBe(false);
  });
});
