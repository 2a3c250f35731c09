/**
 * The RegenerationQueue port's contract: an intent arrives as sent, in its group; intents under
 * one deduplication ID collapse into one. Left out: local-aws-sqs forgets a deduplication ID once
 * its message is deleted (SQS keeps it 5 minutes) and hands out a group's messages while one is
 * in flight (SQS holds them back; `test/helpers/fifo-queue.ts` simulates that for the unit tier).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { RegenerationIntent } from '../../../../lambda/core/page/intent.js';
import type { QueueSubject } from '../../../helpers/contract-subjects.js';

const intent = (path: string): RegenerationIntent => ({
  v: 1,
  path,
  query: '',
  deployId: 'd1',
  observedGeneratedAt: 1_800_000_000,
});

export function regenerationQueueContract(name: string, make: () => Promise<QueueSubject>): void {
  describe(`RegenerationQueue contract (${name})`, () => {
    let s: QueueSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('delivers an intent as sent, in its message group', async () => {
      await s.regeneration.enqueue(intent('/a'), { deduplicationId: 'd-a', groupId: 'g-a' });
      expect(await s.queued()).toEqual([
        { body: JSON.stringify(intent('/a')), groupId: 'g-a', attributes: {} },
      ]);
    });

    it('collapses intents under one deduplication ID into one message, and keeps others apart', async () => {
      await s.regeneration.enqueue(intent('/a'), { deduplicationId: 'same', groupId: 'g' });
      await s.regeneration.enqueue(intent('/a'), { deduplicationId: 'same', groupId: 'g' });
      await s.regeneration.enqueue(intent('/b'), { deduplicationId: 'other', groupId: 'g' });
      const bodies = (await s.queued()).map((message) => message.body).sort();
      expect(bodies).toEqual([JSON.stringify(intent('/a')), JSON.stringify(intent('/b'))]);
    });

    it('queues a batch past ten intents whole, each deduplication ID once', async () => {
      const paths = Array.from({ length: 23 }, (_, i) => `/p${i}`);
      const batch = paths.map((path) => ({
        intent: intent(path),
        deduplicationId: `d${path.slice(1)}`,
        groupId: `g${path.length}`,
      }));
      await s.regeneration.enqueueBatch([...batch, batch[0]]);
      const bodies = (await s.queued()).map((message) => message.body).sort();
      expect(bodies).toEqual(paths.map((path) => JSON.stringify(intent(path))).sort());
    });
  });
}
