import type { PurgeQueue } from '../../core/revalidate/ports.js';
import type { QueuedPurge } from '../../core/revalidate/purge-message.js';

/**
 * The purge queue in memory: every purge as sent, with its delay. A delayed purge is held back
 * until the test says its delay is over (`release`), as SQS holds it for `DelaySeconds`.
 */
export class InMemoryPurgeQueue implements PurgeQueue {
  /** Purges the purger may receive now, oldest first. */
  readonly visible: QueuedPurge[] = [];
  /** Purges still within their delay. */
  readonly delayed: QueuedPurge[] = [];
  /** Calls made to the queue (one per ten purges, as SQS batches them). */
  calls = 0;

  send(purges: readonly QueuedPurge[]): Promise<void> {
    this.calls += Math.ceil(purges.length / 10);
    for (const purge of purges) (purge.delaySeconds > 0 ? this.delayed : this.visible).push(purge);
    return Promise.resolve();
  }

  /** The delays run out: every delayed purge becomes visible. */
  release(): void {
    this.visible.push(...this.delayed.splice(0));
  }

  /** Takes every visible purge. */
  drain(): QueuedPurge[] {
    return this.visible.splice(0);
  }
}
