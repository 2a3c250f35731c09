/**
 * Where random choices come from (jitter, which render slots a MISS probes): a port like the
 * clock, so a test or the model check passes a seeded one and a run replays the same way.
 * @returns a number in [0, 1)
 */
export type Random = () => number;

/** The runtime's own randomness. */
export const systemRandom: Random = () => Math.random();
