import type { QueuedIntent, RegenerationIntent } from '../../core/page/intent.js';
import type { BatchRegenerationQueue, FanOutQueue } from '../../core/revalidate/ports.js';
import type { QueuedFanOut } from '../../core/revalidate/fan-out-message.js';

/** A FIFO queue in memory: messages with a deduplication ID already seen are dropped. */
export class InMemoryRegenerationQueue implements BatchRegenerationQueue, FanOutQueue {
  readonly messages: QueuedIntent[] = [];
  /** Fan-out steps queued (the same FIFO queue, another message type). */
  readonly fanOuts: QueuedFanOut[] = [];
  readonly #seen = new Set<string>();
  /** Calls made to the queue (one per `enqueue`, one per ten intents of `enqueueBatch`). */
  calls = 0;

  enqueue(
    intent: RegenerationIntent,
    options: { deduplicationId: string; groupId: string },
  ): Promise<void> {
    this.calls += 1;
    this.#add({ intent, ...options });
    return Promise.resolve();
  }

  /** SQS's batches of ten, counted as SQS would bill them. */
  enqueueBatch(intents: readonly QueuedIntent[]): Promise<void> {
    this.calls += Math.ceil(intents.length / 10);
    for (const queued of intents) this.#add(queued);
    return Promise.resolve();
  }

  sendFanOut(body: string, options: { deduplicationId: string; groupId: string }) {
    this.calls += 1;
    if (!this.#seen.has(options.deduplicationId)) {
      this.#seen.add(options.deduplicationId);
      this.fanOuts.push({ body, ...options });
    }
    return Promise.resolve();
  }

  #add(queued: QueuedIntent): void {
    if (!this.#seen.has(queued.deduplicationId)) {
      this.#seen.add(queued.deduplicationId);
      this.messages.push(queued);
    }
  }

  /** Takes every message queued so far. */
  drain(): QueuedIntent[] {
    return this.messages.splice(0);
  }
}
