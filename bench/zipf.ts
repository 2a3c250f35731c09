/** The edge bench's popularity: a seeded Zipf sampler, so a run replays the same views. */

/** Zipf's exponent: the k-th most viewed page gets views in proportion to 1/k^s. */
export const ZIPF_EXPONENT = 1;

/** A Zipf sampler over ranks 0..n-1 from a seeded uniform source. */
export function zipf(n: number, exponent: number, random: () => number): () => number {
  const cumulative: number[] = [];
  let sum = 0;
  for (let k = 1; k <= n; k++) cumulative.push((sum += 1 / k ** exponent));
  return () => {
    const target = random() * sum;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if ((cumulative[mid] ?? 0) < target) low = mid + 1;
      else high = mid;
    }
    return low;
  };
}
