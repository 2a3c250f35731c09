import type { Clock } from '../../lambda/core/clock.js';

interface Sleeper {
  readonly wakeAt: number;
  readonly wake: () => void;
}

/**
 * A virtual clock tests move by hand. Starts at a fixed instant so rows are reproducible. A
 * `sleep` on it waits until the test advances the clock past its end (or its signal aborts);
 * with `autoAdvance`, every sleep moves the clock forward by its own length at once instead,
 * for code that only sleeps in line (a retry's backoff), never in the background.
 */
export class TestClock implements Clock {
  #ms: number;
  #sleepers: Sleeper[] = [];
  #onSleep: (() => void)[] = [];
  readonly #autoAdvance: boolean;
  /** Every sleep asked for, in ms, in order. */
  readonly slept: number[] = [];

  constructor(startSeconds = 1_800_000_000, options: { readonly autoAdvance?: boolean } = {}) {
    this.#ms = startSeconds * 1000;
    this.#autoAdvance = options.autoAdvance ?? false;
  }

  now(): number {
    return this.#ms;
  }

  get seconds(): number {
    return Math.floor(this.#ms / 1000);
  }

  advance(seconds: number): void {
    this.advanceMs(seconds * 1000);
  }

  /** Moves time forward and wakes, in order, every sleeper whose time has come. */
  advanceMs(ms: number): void {
    this.#ms += ms;
    const due = this.#sleepers.filter((sleeper) => sleeper.wakeAt <= this.#ms);
    this.#sleepers = this.#sleepers.filter((sleeper) => sleeper.wakeAt > this.#ms);
    due.sort((a, b) => a.wakeAt - b.wakeAt).forEach((sleeper) => sleeper.wake());
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.slept.push(ms);
    if (signal?.aborted === true) return Promise.resolve();
    if (this.#autoAdvance) {
      this.advanceMs(ms);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const sleeper: Sleeper = {
        wakeAt: this.#ms + ms,
        wake: () => {
          signal?.removeEventListener('abort', cancel);
          resolve();
        },
      };
      const cancel = () => {
        this.#sleepers = this.#sleepers.filter((other) => other !== sleeper);
        resolve();
      };
      signal?.addEventListener('abort', cancel, { once: true });
      this.#sleepers.push(sleeper);
      this.#onSleep.splice(0).forEach((notify) => notify());
    });
  }

  /** Sleepers waiting now. */
  get sleeping(): number {
    return this.#sleepers.length;
  }

  /** Resolves once at least `count` sleepers wait on this clock. */
  async whenSleeping(count = 1): Promise<void> {
    while (this.#sleepers.length < count) {
      await new Promise<void>((resolve) => this.#onSleep.push(resolve));
    }
  }

  /** Advances to the earliest sleeper's wake time (nothing when none waits). */
  advanceToNextSleeper(): void {
    const next = Math.min(...this.#sleepers.map((sleeper) => sleeper.wakeAt));
    if (Number.isFinite(next)) this.advanceMs(Math.max(0, next - this.#ms));
  }

  /**
   * Waits for `work`, moving time forward whenever it sleeps: virtual time passes exactly as
   * fast as the work asks. Every sleeper is woken in its turn, so use it where the sleepers are
   * the work's own (a poll, a backoff), not where a timer runs beside it (a lease keeper).
   */
  async runUntil<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const done = work.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (!settled) {
      await Promise.race([done, this.whenSleeping()]);
      if (!settled) this.advanceToNextSleeper();
    }
    return work;
  }
}

/** A clock `offsetMs` ahead of (or behind) `clock`, sleeping on it. */
export const shiftedClock = (clock: Clock, offsetMs: number): Clock => ({
  now: () => clock.now() + offsetMs,
  sleep: (ms, signal) => clock.sleep(ms, signal),
});
