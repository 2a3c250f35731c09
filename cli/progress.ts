/**
 * A progress line (`isr revalidate status --wait`): redrawn in place on a terminal, so a long
 * wait is one line, not one per poll (issue 35, item 9); plain lines elsewhere (a pipe, a log,
 * CI), printed only when the line changes, so a log holds each step once.
 */

export interface Progress {
  update(line: string): void;
  /** Ends the line being redrawn, so what follows starts on its own line. */
  done(): void;
}

/** What a progress line is written to: process.stderr, or a test's stand-in. */
export interface ProgressStream {
  readonly isTTY?: boolean | undefined;
  write(text: string): unknown;
}

/** Carriage return, then erase the whole line (ECMA-48 EL 2): the cursor stays on the line. */
const REDRAW = '\r\x1b[2K';

export function progressOn(stream: ProgressStream): Progress {
  if (stream.isTTY !== true) return plainProgress((line) => stream.write(`${line}\n`));
  let drawn = false;
  return {
    update(line) {
      stream.write(`${REDRAW}${line}`);
      drawn = true;
    },
    done() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}

/** One line per change of the text, through `print` (which ends each line itself). */
export function plainProgress(print: (line: string) => void): Progress {
  let last: string | undefined;
  return {
    update(line) {
      if (line !== last) print(line);
      last = line;
    },
    done() {
      last = undefined;
    },
  };
}
