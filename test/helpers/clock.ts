import type { Clock } from '../../lambda/core/clock.js';

/** A clock tests move by hand. Starts at a fixed instant so rows are reproducible. */
export class TestClock implements Clock {
  #ms: number;

  constructor(startSeconds = 1_800_000_000) {
    this.#ms = startSeconds * 1000;
  }

  now(): number {
    return this.#ms;
  }

  get seconds(): number {
    return Math.floor(this.#ms / 1000);
  }

  advance(seconds: number): void {
    this.#ms += seconds * 1000;
  }
}
