/** Small statistics and reporting helpers for the benchmarks. */

export const percentile = (samples: readonly number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
};

export const median = (samples: readonly number[]): number => percentile(samples, 50);

export const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

/** One progress line on stderr, rewritten in place on a terminal. */
export function progress(label: string, done: number, total: number): void {
  const width = 24;
  const filled = Math.round((done / total) * width);
  const line = `  ${label.padEnd(34)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
  if (process.stderr.isTTY) {
    process.stderr.write(`\r${line}${done >= total ? '\n' : ''}`);
  } else if (done === total || done % Math.max(1, Math.floor(total / 4)) === 0) {
    process.stderr.write(`${line}\n`);
  }
}

/** Runs `task` over `items` with at most `concurrency` at a time, reporting progress. */
export async function pool<T>(
  label: string,
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      await task(item);
      progress(label, ++done, items.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** A plain-text table. */
export function table(rows: readonly (readonly (string | number)[])[]): string {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => String(row[column] ?? '').length))) ??
    [];
  const line = (row: readonly (string | number)[]) =>
    row
      .map((cell, column) => String(cell).padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  return [
    line(header ?? []),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...body.map(line),
  ].join('\n');
}

/**
 * Times each run `iterations` times, interleaved in a rotated order (A B C, B C A...) after a
 * warm-up, so drift and noise weigh on each alike; p50 and p99 in ms per run.
 */
export async function interleave<K extends string>(
  label: string,
  runs: Readonly<Record<K, () => Promise<void>>>,
  iterations: number,
  warmup = Math.min(50, iterations),
): Promise<Record<K, { p50: number; p99: number }>> {
  const names = Object.keys(runs) as K[];
  const timings = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
    K,
    number[]
  >;
  for (let i = 0; i < warmup; i++) for (const name of names) await runs[name]();
  for (let i = 0; i < iterations; i++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length];
      const started = performance.now();
      await runs[name]();
      timings[name].push(performance.now() - started);
    }
    if (i % 50 === 49 || i === iterations - 1) progress(label, i + 1, iterations);
  }
  return Object.fromEntries(
    names.map((name) => [
      name,
      {
        p50: round(percentile(timings[name], 50), 3),
        p99: round(percentile(timings[name], 99), 3),
      },
    ]),
  ) as Record<K, { p50: number; p99: number }>;
}

/** `a / b` for p50 and p99, rounded. */
export const ratios = (
  a: { p50: number; p99: number },
  b: { p50: number; p99: number },
): { p50: number; p99: number } => ({ p50: round(a.p50 / b.p50, 3), p99: round(a.p99 / b.p99, 3) });
