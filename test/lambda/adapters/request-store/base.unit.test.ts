/**
 * The order in which Powertools idempotency calls `RequestStoreBase`, pinned: the base extends
 * Powertools through its documented hooks (`_putRecord`, `_updateRecord`, `_deleteRecord`,
 * `_getRecord`) and relies on when they are called. A Powertools upgrade that changes any of it
 * fails here, before it can time a claim on the wrong clock or write the wrong settlement.
 */
import { describe, expect, it } from '@jest/globals';
import {
  BasePersistenceLayer,
  type IdempotencyRecord,
} from '@aws-lambda-powertools/idempotency/persistence';
import type { NewClaim } from '../../../../lambda/adapters/request-store/rows.js';
import { InMemoryRequestStore } from '../../../../lambda/adapters/request-store/memory.js';
import { MemoryTable } from '../../../../lambda/adapters/shared/memory-table.js';
import {
  createIdempotencyConfig,
  runOnce,
  Settlement,
  type IdempotentCall,
  type RecordedOutcome,
} from '../../../../lambda/core/idempotency.js';
import { TestClock } from '../../../helpers/clock.js';
import { fixedContext } from '../../../helpers/memory-service.js';

/** The in-memory store, recording each hook Powertools calls, in order. */
class ProbeStore extends InMemoryRequestStore {
  readonly calls: string[] = [];
  readonly claims: NewClaim[] = [];

  override configure(options: Parameters<InMemoryRequestStore['configure']>[0]): void {
    this.calls.push('configure');
    super.configure(options);
  }
  protected override insertClaim(claim: NewClaim, nowMs: number): Promise<void> {
    this.claims.push(claim);
    return super.insertClaim(claim, nowMs);
  }
  protected override _putRecord(record: IdempotencyRecord): Promise<void> {
    this.calls.push('put');
    return super._putRecord(record);
  }
  protected override _getRecord(key: string): Promise<IdempotencyRecord> {
    this.calls.push('get');
    return super._getRecord(key);
  }
  protected override _updateRecord(record: IdempotencyRecord): Promise<void> {
    this.calls.push(`update:${(record.responseData as { decision?: string }).decision}`);
    return super._updateRecord(record);
  }
  protected override _deleteRecord(record: IdempotencyRecord): Promise<void> {
    this.calls.push('delete');
    return super._deleteRecord(record);
  }
}

function setup() {
  const clock = new TestClock();
  const store = new ProbeStore(new MemoryTable(), clock);
  const config = createIdempotencyConfig(3_600);
  config.registerLambdaContext(fixedContext(30_000, 'probe'));
  let calls = 0;
  const call = (request = 'a'): IdempotentCall => ({
    pk: 'CACHE#probe',
    key: `k${calls}`,
    request: { request },
  });
  const next = () => (calls += 1);
  return { clock, store, config, idempotency: { store, config }, call, next };
}

const done = (decision: string): RecordedOutcome => ({
  settlement: Settlement.Completed,
  decision,
});

describe('Powertools idempotency calls RequestStoreBase in the order it relies on', () => {
  it('calls _putRecord synchronously inside saveInProgress, so each claim reads its own time left', () => {
    const { store, config, clock } = setup();
    store.configure({ config });
    const first = store.saveInProgress({ pk: 'CACHE#a', key: 'k1', request: { n: 1 } }, 1_000);
    const second = store.saveInProgress({ pk: 'CACHE#b', key: 'k2', request: { n: 2 } }, 9_000);
    // Both claims were built before either call awaited anything.
    expect(store.claims.map((claim) => [claim.key, claim.inProgressExpiresAtMs])).toEqual([
      ['k1', clock.now() + 1_000],
      ['k2', clock.now() + 9_000],
    ]);
    expect(store.claims.map((claim) => claim.request)).toEqual(['{"n":1}', '{"n":2}']);
    return Promise.all([first, second]);
  });

  it('new key: configure, claim, the work, then the settlement with what the work returned', async () => {
    const { store, idempotency, call } = setup();
    const order = store.calls;
    const run = await runOnce(idempotency, call(), () => {
      order.push('work');
      return Promise.resolve(done('fresh'));
    });
    expect(run).toEqual({ status: 'new', outcome: done('fresh') });
    expect(order).toEqual(['configure', 'put', 'work', 'update:fresh']);
    expect(store.claims[0]?.lockedBy).toBe('probe/request-1');
  });

  it('a failing work: claim, work, release; the very error comes back, unwrapped', async () => {
    const { store, idempotency, call } = setup();
    const failure = new Error('render crashed');
    await expect(runOnce(idempotency, call(), () => Promise.reject(failure))).rejects.toBe(failure);
    expect(store.calls).toEqual(['configure', 'put', 'delete']);
    // The claim was released: the same call runs again.
    const again = await runOnce(idempotency, call(), () => Promise.resolve(done('new')));
    expect(again.status).toBe('new');
  });

  it('a settled key: the refused claim carries the row, which is replayed without a read', async () => {
    const { store, idempotency, call } = setup();
    await runOnce(idempotency, call(), () => Promise.resolve(done('lease-held')));
    store.calls.length = 0;
    const replay = await runOnce(idempotency, call(), () => Promise.reject(new Error('ran twice')));
    expect(replay).toEqual({ status: 'replayed', outcome: done('lease-held') });
    expect(store.calls).toEqual(['configure', 'put']);
  });

  it('the same key with another request: validated against the stored hash, nothing run', async () => {
    const { store, idempotency, call } = setup();
    await runOnce(idempotency, call('a'), () => Promise.resolve(done('new')));
    store.calls.length = 0;
    const conflict = await runOnce(idempotency, call('b'), () =>
      Promise.reject(new Error('ran for another request')),
    );
    expect(conflict.status).toBe('conflict');
    expect(store.calls).toEqual(['configure', 'put']);
  });

  it('a key whose claim is live: in progress, nothing run; the first call still settles', async () => {
    const { store, idempotency, call } = setup();
    let finish: (outcome: RecordedOutcome) => void = () => undefined;
    const first = runOnce(
      idempotency,
      call(),
      () => new Promise<RecordedOutcome>((resolve) => (finish = resolve)),
    );
    while (store.claims.length === 0) await Promise.resolve();
    const second = await runOnce(idempotency, call(), () => Promise.reject(new Error('ran twice')));
    expect(second.status).toBe('in-progress');
    finish(done('new'));
    expect((await first).status).toBe('new');
    expect(store.calls).toEqual(['configure', 'put', 'configure', 'put', 'update:new']);
  });

  it('negative control: were Powertools to await before _putRecord, claims would mix up their times', async () => {
    const layer = BasePersistenceLayer.prototype as unknown as {
      saveInProgress: (...args: unknown[]) => Promise<void>;
    };
    const original = layer.saveInProgress;
    layer.saveInProgress = async function (this: unknown, ...args: unknown[]) {
      await Promise.resolve();
      return original.apply(this, args);
    };
    try {
      const { store, config, clock } = setup();
      store.configure({ config });
      const first = store.saveInProgress({ pk: 'CACHE#a', key: 'k1', request: { n: 1 } }, 1_000);
      const second = store.saveInProgress({ pk: 'CACHE#b', key: 'k2', request: { n: 2 } }, 9_000);
      expect(store.claims).toEqual([]); // the first test's synchronous check fails
      await Promise.all([first, second]);
      expect(store.claims.map((claim) => [claim.key, claim.inProgressExpiresAtMs])).toEqual([
        ['k1', clock.now() + 9_000],
        ['k2', undefined],
      ]);
    } finally {
      layer.saveInProgress = original;
    }
  });
});
