/**
 * The RequestStore port's contract, through `runOnce` (Powertools over the store): a key runs
 * once, replays what its row keeps, refuses another request, waits out a live claim, and is free
 * again once its claim is released, abandoned or past its TTL.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  createIdempotencyConfig,
  runOnce,
  Settlement,
  type IdempotentCall,
  type RecordedOutcome,
} from '../../../../lambda/core/idempotency.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';
import { fixedContext } from '../../../helpers/memory-service.js';
import { gate } from '../../../helpers/renderers.js';

const TTL = 3_600;
/** How long an invocation has left when it claims a key. */
const REMAINING_MS = 30_000;

export function requestStoreContract(name: string, make: () => Promise<TableSubject>): void {
  describe(`RequestStore contract (${name})`, () => {
    let s: TableSubject;
    let keys = 0;
    beforeAll(async () => {
      s = await make();
    });
    afterAll(() => s.destroy());

    const idempotency = () => {
      const config = createIdempotencyConfig(TTL);
      config.registerLambdaContext(fixedContext(REMAINING_MS, 'contract'));
      return { store: s.requests, config };
    };
    const call = (request: Record<string, string> = { page: '/a' }): IdempotentCall => ({
      pk: 'CACHE#contract-requests',
      key: `k${keys}`,
      request,
    });
    const next = () => (keys += 1);
    const run = (c: IdempotentCall, outcome: RecordedOutcome) =>
      runOnce(idempotency(), c, () => Promise.resolve(outcome));
    const refusedAgain = () => Promise.reject(new Error('ran a second time'));

    it('runs a new key once, and replays what its row keeps for the same request', async () => {
      next();
      const outcome = {
        settlement: Settlement.Completed,
        decision: 'fresh',
        s3Key: 'pages/_/h/t',
        failures: 3, // not kept: a replay does not see it
        response: { status: 202, body: '{"a":1}' },
      };
      expect(await run(call(), outcome)).toEqual({ status: 'new', outcome });
      const replay = await runOnce(idempotency(), call(), refusedAgain);
      expect(replay).toEqual({
        status: 'replayed',
        outcome: {
          settlement: Settlement.Completed,
          decision: 'fresh',
          s3Key: 'pages/_/h/t',
          response: { status: 202, body: '{"a":1}' },
        },
      });
    });

    it('keeps a FAILED row with its reason, and replays it', async () => {
      next();
      const error = { code: 'refused:status', message: 'x'.repeat(3_000) };
      await run(call(), { settlement: Settlement.Failed, decision: 'refused', error });
      const replay = await runOnce(idempotency(), call(), refusedAgain);
      expect(replay).toMatchObject({
        status: 'replayed',
        outcome: {
          settlement: Settlement.Failed,
          decision: 'refused',
          error: { code: 'refused:status', message: 'x'.repeat(2_048) },
        },
      });
    });

    it('refuses the key with another request, nothing run, and tells the first request', async () => {
      next();
      await run(call({ page: '/a' }), { settlement: Settlement.Completed, decision: 'new' });
      const conflict = await runOnce(idempotency(), call({ page: '/b' }), refusedAgain);
      expect(conflict.status).toBe('conflict');
      expect(await s.requests.firstRequest(call().pk, call().key)).toEqual({ page: '/a' });
    });

    it('answers in-progress while a claim is live, and lets the key go once it was abandoned', async () => {
      next();
      const claimed = gate();
      const holding = gate();
      const first = runOnce(idempotency(), call(), async () => {
        claimed.open(); // the work runs once the claim is written
        await holding.wait();
        return { settlement: Settlement.Completed, decision: 'new' };
      });
      await claimed.wait();
      const waiting = await runOnce(idempotency(), call(), refusedAgain);
      expect(waiting.status).toBe('in-progress');
      // The first invocation ran out of time without settling (it crashed): the key is free.
      s.clock.advanceMs(REMAINING_MS + 1);
      const retry = await run(call(), { settlement: Settlement.Completed, decision: 'fresh' });
      expect(retry.status).toBe('new');
      holding.open();
      await first;
    });

    it('releases the claim of a call that failed, so the same call runs again', async () => {
      next();
      const failure = new Error('render crashed');
      await expect(runOnce(idempotency(), call(), () => Promise.reject(failure))).rejects.toBe(
        failure,
      );
      const again = await run(call(), { settlement: Settlement.Completed, decision: 'new' });
      expect(again.status).toBe('new');
    });

    it('runs the key again once its row outlived its TTL', async () => {
      next();
      await run(call(), { settlement: Settlement.Completed, decision: 'fresh' });
      s.clock.advance(TTL + 1);
      const later = await run(call(), { settlement: Settlement.Completed, decision: 'lease-held' });
      expect(later.status).toBe('new');
    });

    it('tells no first request for a key never used', async () => {
      expect(await s.requests.firstRequest('CACHE#contract-requests', 'never')).toBeUndefined();
    });
  });
}
