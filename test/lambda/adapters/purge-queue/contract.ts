/**
 * The PurgeQueue port's contract: a purge arrives as sent; a delayed one (a deadline) is held
 * back for its delay, not handed out at once; purges past SQS's ten a call arrive whole. The
 * delay itself runs on the backend's clock (local-aws-sqs: the wall clock), so the contract
 * checks that the purge waits, never how long.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { PurgeQueueSubject } from '../../../helpers/contract-subjects.js';

export function purgeQueueContract(name: string, make: () => Promise<PurgeQueueSubject>): void {
  describe(`PurgeQueue contract (${name})`, () => {
    let s: PurgeQueueSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('delivers an undelayed purge as sent, at once', async () => {
      await s.purges.send([{ body: '{"soft":1}', delaySeconds: 0 }]);
      expect(await s.visible()).toEqual(['{"soft":1}']);
      expect(await s.delayed()).toBe(0);
    });

    it('holds a delayed purge back, and hands out the undelayed ones sent with it', async () => {
      await s.purges.send([
        { body: '{"deadline":1}', delaySeconds: 300 },
        { body: '{"soft":2}', delaySeconds: 0 },
      ]);
      expect(await s.visible()).toEqual(['{"soft":2}']);
      expect(await s.delayed()).toBe(1);
    });

    it('sends purges past ten whole', async () => {
      const bodies = Array.from({ length: 23 }, (_, i) => `{"n":${i}}`);
      await s.purges.send(bodies.map((body) => ({ body, delaySeconds: 0 })));
      expect((await s.visible()).sort()).toEqual([...bodies].sort());
    });
  });
}
