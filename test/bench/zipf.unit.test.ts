/**
 * The edge bench's Zipf sampler: rank k is drawn in proportion to 1/k^s, so the figures in
 * docs/PERFORMANCE.md come from the popularity they say. The negative control is the uniform
 * exponent 0, which the same checks tell apart.
 */
import { describe, expect, it } from '@jest/globals';
import { zipf } from '../../bench/zipf.js';
import { seededRandom } from '../helpers/random.js';

const SAMPLES = 50_000;

/** How often each rank was drawn, as a share of the samples. */
function shares(n: number, exponent: number): number[] {
  const next = zipf(n, exponent, seededRandom(7));
  const counts = new Array<number>(n).fill(0);
  for (let i = 0; i < SAMPLES; i++) {
    const rank = next();
    counts[rank] = (counts[rank] ?? 0) + 1;
  }
  return counts.map((count) => count / SAMPLES);
}

const harmonic = (n: number) =>
  Array.from({ length: n }, (_, k) => 1 / (k + 1)).reduce((a, b) => a + b);

describe('the edge bench’s Zipf sampler', () => {
  it('draws rank k with probability (1/k) / H(n) at s = 1, and only ranks 0..n-1', () => {
    const drawn = shares(100, 1);
    expect(drawn).toHaveLength(100);
    for (const k of [1, 2, 10, 100]) {
      expect(drawn[k - 1]).toBeCloseTo(1 / k / harmonic(100), 2);
    }
  });

  it('negative control: s = 0 is uniform, and the same check refuses it', () => {
    const drawn = shares(100, 0);
    expect(drawn[0]).toBeCloseTo(0.01, 2);
    expect(Math.abs((drawn[0] ?? 0) - 1 / harmonic(100))).toBeGreaterThan(0.1);
  });
});
