/**
 * The DeadLetterQueue port's contract: a letter arrives with the message, its group and the
 * reason it was given up on; a letter sent again for the same message (a failed acknowledgement)
 * arrives once.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DeadLetterAttribute } from '../../../../lambda/adapters/dead-letter-queue/sqs.js';
import type { DeadLetter } from '../../../../lambda/core/page/ports.js';
import type { QueueSubject } from '../../../helpers/contract-subjects.js';

const letter = (messageId: string): DeadLetter => ({
  messageId,
  body: '{"v":1,"path":',
  groupId: 'g1',
  receiveCount: 2,
  reason: { code: 'invalid-message', message: 'message body is not JSON' },
});

export function deadLetterQueueContract(name: string, make: () => Promise<QueueSubject>): void {
  describe(`DeadLetterQueue contract (${name})`, () => {
    let s: QueueSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('delivers the message with its group and its reason', async () => {
      await s.deadLetters.send(letter('m1'));
      expect(await s.deadLettered()).toEqual([
        {
          body: '{"v":1,"path":',
          groupId: 'g1',
          attributes: {
            [DeadLetterAttribute.Code]: 'invalid-message',
            [DeadLetterAttribute.Message]: 'message body is not JSON',
            [DeadLetterAttribute.SourceMessageId]: 'm1',
            [DeadLetterAttribute.ReceiveCount]: '2',
          },
        },
      ]);
    });

    it('keeps one letter per message, however often it is sent', async () => {
      await s.deadLetters.send(letter('m1'));
      await s.deadLetters.send(letter('m1'));
      await s.deadLetters.send(letter('m2'));
      const sources = (await s.deadLettered()).map(
        (arrived) => arrived.attributes[DeadLetterAttribute.SourceMessageId],
      );
      expect(sources.sort()).toEqual(['m1', 'm2']);
    });
  });
}
