import type { QueuedIntent, RegenerationIntent } from '../../core/intent.js';
import type { RegenerationQueue } from '../../core/ports.js';

/** A FIFO queue in memory: messages with a deduplication ID already seen are dropped. */
export class InMemoryRegenerationQueue implements RegenerationQueue {
  readonly messages: QueuedIntent[] = [];
  readonly #seen = new Set<string>();

  enqueue(
    intent: RegenerationIntent,
    options: { deduplicationId: string; groupId: string },
  ): Promise<void> {
    if (!this.#seen.has(options.deduplicationId)) {
      this.#seen.add(options.deduplicationId);
      this.messages.push({ intent, ...options });
    }
    return Promise.resolve();
  }

  /** Takes every message queued so far. */
  drain(): QueuedIntent[] {
    return this.messages.splice(0);
  }
}
