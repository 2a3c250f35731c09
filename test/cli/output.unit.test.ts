/**
 * How the CLI shows what it found (issue 35, items 7, 9, 10): the progress of a wait, redrawn on
 * a terminal and plain elsewhere; a stale page's state; what an empty `failed` means.
 */
import { describe, expect, it } from '@jest/globals';
import type { Inspection } from '../../cli/commands/inspect.js';
import { formatInspection, formatStatusRows } from '../../cli/format.js';
import { progressOn } from '../../cli/progress.js';

/** A stream as process.stderr is one: on a terminal or not. */
const stream = (isTTY: boolean) => {
  const written: string[] = [];
  return { isTTY, written, write: (text: string) => written.push(text) };
};

describe('the progress line', () => {
  it('is redrawn in place on a terminal (CR, erase line), and ended by one newline', () => {
    const tty = stream(true);
    const progress = progressOn(tty);
    progress.update('marking  [----] 0/10');
    progress.update('marking  [##--] 5/10');
    progress.done();
    expect(tty.written).toEqual([
      '\r\x1b[2Kmarking  [----] 0/10',
      '\r\x1b[2Kmarking  [##--] 5/10',
      '\n',
    ]);
  });

  it('is plain lines elsewhere, one per change: a log holds each step once', () => {
    const pipe = stream(false);
    const progress = progressOn(pipe);
    for (const line of ['0/10', '0/10', '0/10', '5/10', '5/10']) progress.update(line);
    progress.done();
    expect(pipe.written).toEqual(['0/10\n', '5/10\n']);
    expect(pipe.written.join('')).not.toContain('\r');
  });
});

describe('isr inspect: the state line', () => {
  const now = 1_800_000_000;
  const inspection = (meta: Partial<NonNullable<Inspection['meta']>>, held = false) =>
    ({
      cacheKey: { key: '/hello', pk: 'CACHE#x' },
      now,
      meta: { pk: 'CACHE#x', s3Key: 'k', generatedAt: now - 25, revalidateSeconds: 10, ...meta },
      freshness: {
        state: held || meta.revalidateSeconds === 60 ? 'fresh' : 'stale',
        secondsLeft: held ? 600 : 0,
        held,
      },
      lock: undefined,
      requests: [],
      versions: [],
      body: undefined,
    }) as unknown as Inspection;
  const stateOf = (i: Inspection) => /^state: +(.*)$/m.exec(formatInspection(i))?.[1];

  it('says since when a page is stale, never "0s left"', () => {
    expect(stateOf(inspection({}))).toBe('stale for 15s');
  });

  it('says a revalidation marked it (revalidate_seconds 0)', () => {
    expect(stateOf(inspection({ revalidateSeconds: 0 }))).toBe('stale (marked by a revalidation)');
  });

  it('says how long a fresh or held page stays so', () => {
    expect(
      stateOf({
        ...inspection({ revalidateSeconds: 60 }),
        freshness: { state: 'fresh', secondsLeft: 35, held: false },
      }),
    ).toBe('fresh (35s left)');
    expect(stateOf(inspection({ holdUntil: now + 600 }, true))).toBe('fresh, held (10m left)');
  });
});

describe('isr failed and isr stuck with nothing to show', () => {
  it('says what failed looks for, and where a page still retrying shows its failures', () => {
    expect(formatStatusRows([], 'failed')).toMatch(
      /^no failed work: .* broken .*still retried shows them in `isr inspect <url>`$/,
    );
    expect(formatStatusRows([], 'stuck')).toMatch(/^no stuck work: /);
  });
});
