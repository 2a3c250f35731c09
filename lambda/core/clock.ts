/** Time is a dependency: code that decides on expiry or freshness takes a clock, tests freeze it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** FaceTheory rows store epoch seconds. */
export const epochSeconds = (clock: Clock): number => Math.floor(clock.now() / 1000);
