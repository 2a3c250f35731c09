import type { DeadLetter, DeadLetterQueue } from '../../core/page/ports.js';

/**
 * Dead letters in memory, in the order they were sent. A letter for a message already
 * dead-lettered is dropped, as the SQS adapter's dedupe ID (the message ID) makes FIFO drop it.
 */
export class InMemoryDeadLetterQueue implements DeadLetterQueue {
  readonly letters: DeadLetter[] = [];

  send(letter: DeadLetter): Promise<void> {
    if (!this.letters.some((sent) => sent.messageId === letter.messageId))
      this.letters.push(letter);
    return Promise.resolve();
  }
}
