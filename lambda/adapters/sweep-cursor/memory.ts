import type { SweepCursor } from '../../core/operate/ports.js';

/** The orphan sweep's cursor in memory, counting its saves. */
export class InMemorySweepCursor implements SweepCursor {
  value: string | undefined;
  saves = 0;

  load(): Promise<string | undefined> {
    return Promise.resolve(this.value);
  }

  save(cursor: string | undefined): Promise<void> {
    this.value = cursor;
    this.saves += 1;
    return Promise.resolve();
  }
}
