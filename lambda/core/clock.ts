/**
 * Time is a dependency: code that decides on expiry or freshness, or that waits (a backoff, a
 * poll, a lease refresh, a timeout), takes a clock. Tests pass a virtual one and move it by hand
 * instead of sleeping; nothing in the core reads the wall clock or sets a timer of its own.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Resolves once `ms` have passed on this clock, or as soon as `signal` aborts, whichever comes
   * first; it never rejects. A caller that cares which happened reads `signal.aborted`.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock, and timers on it. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted === true) return resolve();
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal?.addEventListener('abort', wake, { once: true });
    }),
};

/** FaceTheory rows store epoch seconds. */
export const epochSeconds = (clock: Pick<Clock, 'now'>): number => Math.floor(clock.now() / 1000);
