/**
 * `isr budget` against the real local backends, over a worker that deferred a regeneration past
 * its budget (DynamoDB Local, local-aws-sqs): the budget, this minute's count, the page waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { run } from '../../cli/run.js';
import type { Target } from '../../cli/target.js';
import type { BudgetView } from '../../cli/commands/budget.js';
import { TestClock } from '../helpers/clock.js';
import { countingRenderer } from '../helpers/renderers.js';
import { createWorkerHarness, intentFor, type WorkerHarness } from '../helpers/worker-harness.js';

const clock = new TestClock();
const counter = countingRenderer();
let h: WorkerHarness;

beforeAll(async () => {
  h = await createWorkerHarness({
    renderer: counter.renderer,
    clock,
    env: { ISR_REGENERATION_BUDGET: '1' },
  });
});
afterAll(() => h.destroy());

const targetWith = (regenerationBudget: number | undefined): Target => ({
  kind: 'local',
  name: 'test',
  region: 'us-east-1',
  clients: h.clients,
  tableName: h.tableName,
  bucket: h.bucket,
  queueUrl: h.queues.queueUrl,
  dlqUrl: h.queues.dlqUrl,
  revalidateUrl: undefined,
  distributionId: undefined,
  settings: { allowedQueryParams: [], renderPaths: [], leaseSeconds: 30, regenerationBudget },
});

async function isr(target: Target, ...argv: string[]) {
  const out: string[] = [];
  const code = await run(argv, {
    out: (text) => out.push(text),
    err: () => undefined,
    env: { USER: 'oncall' },
    clock,
    target: () => Promise.resolve(target),
  });
  return { code, out: out.join('\n') };
}

describe('isr budget', () => {
  it('shows the budget, this minute’s regenerations and the page the worker deferred', async () => {
    await h.send(intentFor('/first'), 'g1');
    await h.poll(1);
    await h.send(intentFor('/second'), 'g2');
    await h.poll(1);
    expect(counter.calls).toBe(1);

    const json = await isr(targetWith(1), 'budget', '--json');
    expect(json.code).toBe(0);
    const view = JSON.parse(json.out) as BudgetView;
    expect(view).toMatchObject({
      budget: 1,
      tenant: null,
      thisMinute: 1,
      deferred: 1,
      truncated: false,
      pages: [{ page: '/second', explicit: true, deferredAt: clock.seconds }],
    });
    const text = await isr(targetWith(1), 'budget');
    expect(text.out).toMatch(/regeneration budget of the site: 1 a minute/);
    expect(text.out).toMatch(/this minute: 1 regeneration\(s\)/);
    expect(text.out).toMatch(
      /deferred: 1 page\(s\) waiting\n {2}\/second {2}\(revalidation, waiting 0 s\)/,
    );
  });

  it('says unlimited when the stack sets no budget, and nothing waits for another tenant', async () => {
    const json = await isr(targetWith(undefined), 'budget', '--tenant', 'other', '--json');
    expect(JSON.parse(json.out)).toMatchObject({
      budget: null,
      tenant: 'other',
      thisMinute: 0,
      deferred: 0,
    });
  });
});
