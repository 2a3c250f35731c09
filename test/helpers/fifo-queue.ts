/**
 * An SQS FIFO queue's delivery rules, in memory and on a virtual clock, for what local-aws-sqs
 * does not do: while a message of a group is in flight (received, not deleted, visibility not
 * expired), no later message of that group is handed out. A message not deleted comes back
 * after the visibility timeout, first in its group.
 */
export interface FifoMessage {
  readonly id: string;
  readonly body: string;
  readonly groupId: string;
  receiveCount: number;
  /** Virtual seconds: invisible until then. */
  invisibleUntil: number;
}

export class SimulatedFifoQueue {
  readonly #messages: FifoMessage[] = [];
  #ids = 0;

  constructor(readonly visibilityTimeoutSeconds: number) {}

  send(body: string, groupId: string): string {
    const id = `msg-${++this.#ids}`;
    this.#messages.push({ id, body, groupId, receiveCount: 0, invisibleUntil: 0 });
    return id;
  }

  /** Up to `max` messages visible at `now`, at most the head of each unlocked group. */
  receive(max: number, now: number): FifoMessage[] {
    const locked = new Set(
      this.#messages.filter((m) => m.invisibleUntil > now).map((m) => m.groupId),
    );
    const batch: FifoMessage[] = [];
    for (const message of this.#messages) {
      if (batch.length >= max) break;
      if (locked.has(message.groupId)) continue;
      locked.add(message.groupId); // one message of a group per receive, in order
      message.receiveCount += 1;
      message.invisibleUntil = now + this.visibilityTimeoutSeconds;
      batch.push(message);
    }
    return batch;
  }

  delete(id: string): void {
    const index = this.#messages.findIndex((m) => m.id === id);
    if (index !== -1) this.#messages.splice(index, 1);
  }

  get size(): number {
    return this.#messages.length;
  }
}
