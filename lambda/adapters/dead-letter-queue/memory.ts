import type { DeadLetter, DeadLetterQueue } from '../../core/ports.js';

/** Dead letters in memory, in the order they were sent. */
export class InMemoryDeadLetterQueue implements DeadLetterQueue {
  readonly letters: DeadLetter[] = [];

  send(letter: DeadLetter): Promise<void> {
    this.letters.push(letter);
    return Promise.resolve();
  }
}
