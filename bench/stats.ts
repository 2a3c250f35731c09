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
