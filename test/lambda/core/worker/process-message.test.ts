import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Claim, Guard } from '../../../../lambda/adapters/shared/dynamodb/conditions.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { processMessage } from '../../../../lambda/core/worker/process-message.js';
import type { WorkerDeps } from '../../../../lambda/core/worker/deps.js';
import { TestClock } from '../../../helpers/clock.js';
import { removeGuard } from '../../../helpers/guard-mutation.js';
import { countingRenderer, gate } from '../../../helpers/renderers.js';
import { withOverrides } from '../../../helpers/overrides.js';
import {
  createWorkerHarness,
  intentFor,
  message,
  type WorkerHarness,
} from '../../../helpers/worker-harness.js';

const clock = new TestClock();

/**
 * Concurrent deliveries overlap by construction: while armed, a render waits until every
 * delivery has either started rendering too or finished (found the lease held), so both are in
 * flight together whatever the backends' speed.
 */
let overlap: { deliveries: number; arrived: number; all: ReturnType<typeof gate> } | undefined;
const arrive = () => {
  if (overlap !== undefined && ++overlap.arrived >= overlap.deliveries) overlap.all.open();
};
// Pages go stale after a second, so a second delivery is not answered by a fresh META alone.
const counter = countingRenderer(async (request, call) => {
  if (overlap !== undefined) {
    arrive();
    await overlap.all.wait();
  }
  return htmlPage(`<p>${request.cacheKey.key} render ${call}</p>`, { revalidateSeconds: 1 });
});
let h: WorkerHarness;
let paths = 0;
const freshPath = () => `/worker-${++paths}`;

beforeAll(async () => {
  h = await createWorkerHarness({ renderer: counter.renderer, clock });
  h.startInvocation();
});
afterAll(() => h.destroy());

async function withoutGuard<T>(fragment: string, run: () => Promise<T>): Promise<T> {
  const restore = removeGuard(h.clients.dynamodb, fragment);
  try {
    return await run();
  } finally {
    restore();
  }
}

/** The same SQS message (same ID) delivered twice, the second time after the page went stale. */
async function deliverTwice() {
  const path = freshPath();
  const body = intentFor(path); // a forced regeneration: no observed generation
  const first = await processMessage(h.deps, message(`dup-${path}`, body));
  clock.advance(5);
  const second = await processMessage(h.deps, message(`dup-${path}`, body, 2));
  return { path, first, second, renders: counter.callsFor(path) };
}

describe('processMessage idempotency', () => {
  it('renders once when the same message is delivered twice; the second gets the recorded result', async () => {
    const { path, first, second, renders } = await deliverTwice();
    expect(renders).toBe(1);
    expect(first.decision).toBe('new');
    expect(second).toMatchObject({ decision: 'duplicate', action: 'ack' });
    const meta = await h.cacheTable.getMeta(h.keyFor(path).pk, { consistent: true });
    expect(second.detail).toMatchObject({ recorded: 'new', s3Key: meta?.s3Key });
    expect(first.detail).toMatchObject({ s3Key: meta?.s3Key });
    expect(await h.row(h.keyFor(path).pk, `REQ#dup-${path}`)).toMatchObject({
      status: { S: 'COMPLETED' },
      result_s3_key: { S: meta?.s3Key },
      request_hash: { S: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/) as unknown as string },
    });
  });

  it('negative control: without the REQ# claim condition, the duplicate renders again', async () => {
    const { renders, second } = await withoutGuard(Claim.absent, deliverTwice);
    expect(second.decision).toBe('new');
    expect(renders).toBe(2);
  });

  it('refuses the same message ID with a different request, and changes nothing', async () => {
    const path = freshPath();
    const pk = h.keyFor(path).pk;
    const first = await processMessage(h.deps, message('reused-id', intentFor(path)));
    expect(first.decision).toBe('new');
    const metaBefore = await h.row(pk, 'META');
    const reqBefore = await h.row(pk, 'REQ#reused-id');
    clock.advance(5);

    const replay = await processMessage(
      h.deps,
      message('reused-id', intentFor(path, { deployId: 'd2' }), 2),
    );
    expect(replay).toMatchObject({
      decision: 'conflict',
      action: 'dead-letter',
      reason: { code: 'idempotency-conflict' },
    });
    expect(counter.callsFor(path)).toBe(1);
    expect(await h.row(pk, 'META')).toEqual(metaBefore);
    expect(await h.row(pk, 'REQ#reused-id')).toEqual(reqBefore);
    expect(await h.row(pk, 'LOCK')).toBeUndefined();
  });

  it('answers a message for a fresh page without touching REQ# or LOCK', async () => {
    const path = freshPath();
    const pk = h.keyFor(path).pk;
    await processMessage(h.deps, message(`a-${path}`, intentFor(path)));
    const report = await processMessage(h.deps, message(`b-${path}`, intentFor(path)));
    expect(report.decision).toBe('fresh');
    expect(await h.row(pk, `REQ#b-${path}`)).toBeUndefined();
    expect(counter.callsFor(path)).toBe(1);
  });

  it('skips an intent whose stale generation was already replaced', async () => {
    const path = freshPath();
    const first = await processMessage(h.deps, message(`a-${path}`, intentFor(path)));
    const observed = first.detail?.generatedAt as number;
    clock.advance(5); // stale again, but newer than what the second intent saw
    const report = await processMessage(
      h.deps,
      message(`b-${path}`, intentFor(path, { observedGeneratedAt: observed - 10 })),
    );
    expect(report.decision).toBe('fresh');
    expect(counter.callsFor(path)).toBe(1);
  });
});

/** Two different intents for one stale key, processed at the same time. */
async function concurrentIntents() {
  const path = freshPath();
  overlap = { deliveries: 2, arrived: 0, all: gate() };
  try {
    const reports = await Promise.all(
      ['c1', 'c2'].map((id) =>
        processMessage(h.deps, message(`${id}-${path}`, intentFor(path))).finally(arrive),
      ),
    );
    return { reports, renders: counter.callsFor(path), path };
  } finally {
    overlap = undefined;
  }
}

describe('processMessage concurrency', () => {
  it('renders once for two different messages for one key processed concurrently', async () => {
    const { reports, renders } = await concurrentIntents();
    expect(renders).toBe(1);
    expect(reports.map((report) => report.decision).sort()).toEqual(['lease-held', 'new']);
    expect(reports.every((report) => report.action === 'ack')).toBe(true);
  });

  it('negative control: without the lease condition, both render', async () => {
    const { renders } = await withoutGuard(Guard.leaseFree, concurrentIntents);
    expect(renders).toBe(2);
  });
});

describe('processMessage crash recovery', () => {
  it('recovers a crash between the body write and the publish on a later delivery', async () => {
    const path = freshPath();
    const pk = h.keyFor(path).pk;
    let crash = true;
    const bodyWritten = gate();
    const crashingTable = withOverrides(h.deps.cacheTable, {
      // The publish comes right after the body write: the process dies there.
      publishGeneration: (input) => {
        if (!crash) return h.deps.cacheTable.publishGeneration(input);
        bodyWritten.open();
        return new Promise<never>(() => undefined);
      },
    });
    const crashing: WorkerDeps = { ...h.deps, cacheTable: crashingTable };

    // First delivery: dies after writing its body; the promise never settles, like a killed process.
    h.startInvocation(200);
    void processMessage(crashing, message(`crash-${path}`, intentFor(path)));
    await bodyWritten.wait();
    expect(counter.callsFor(path)).toBe(1);
    expect(await h.row(pk, 'LOCK')).toBeDefined();
    expect(await h.row(pk, 'META')).toBeUndefined();
    expect(await h.row(pk, `REQ#crash-${path}`)).toMatchObject({ status: { S: 'STARTED' } });

    // Redelivery after the visibility timeout, once the lease has expired too.
    crash = false;
    clock.advance(h.config.leaseSeconds + 1);
    h.startInvocation();
    const retry = await processMessage(h.deps, message(`crash-${path}`, intentFor(path), 2));
    expect(retry.decision).toBe('new');
    expect(counter.callsFor(path)).toBe(2);
    const meta = await h.cacheTable.getMeta(pk, { consistent: true });
    expect(await h.bodyText(meta?.s3Key ?? '')).toBe(counter.lastPageFor(path));
    expect(await h.row(pk, `REQ#crash-${path}`)).toMatchObject({
      status: { S: 'COMPLETED' },
      result_s3_key: { S: meta?.s3Key },
    });
  });
});
