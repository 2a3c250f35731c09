/**
 * One ordered stop for `npm start`, whatever asks for it first: a signal (Ctrl-C signals the
 * whole process group, and npm and tsx relay it again), the launcher npm being gone, or a
 * backend dying under the service. "stopped cleanly" is only said when it was.
 */

export interface StopStep {
  /** What the step stops, named in the report when it throws. */
  readonly name: string;
  /** Resolves with what was not clean; an empty list is a clean stop. */
  run(): Promise<readonly string[]>;
}

/** Runs the steps one after another (each once the previous one is done); collects what was not clean. */
export async function stopInOrder(steps: readonly StopStep[]): Promise<string[]> {
  const problems: string[] = [];
  for (const step of steps) {
    try {
      problems.push(...(await step.run()));
    } catch (error) {
      problems.push(`${step.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}

export interface ShutdownIo {
  readonly log: (line: string) => void;
  readonly error: (line: string) => void;
  readonly exit: (code: number) => void;
  readonly now: () => number;
}

const processIo: ShutdownIo = {
  log: (line) => console.log(line),
  error: (line) => console.error(line),
  exit: (code) => process.exit(code),
  now: () => Date.now(),
};

/** A signal repeated within this long is the same Ctrl-C relayed, not a second one. */
const RELAY_WINDOW_MS = 2_000;

/**
 * Returns `requestStop(reason, { signal })`: the first request runs `steps` in order, then exits
 * 0 after "stopped cleanly", or 1 after saying what was not clean. A signal that comes again
 * later than the relays of the first one forces the exit.
 */
export function createShutdown(
  steps: readonly StopStep[],
  io: ShutdownIo = processIo,
): (reason: string, options?: { readonly signal?: boolean }) => void {
  let firstAt: number | undefined;
  return (reason, options = {}) => {
    if (firstAt !== undefined) {
      if (options.signal !== true || io.now() - firstAt < RELAY_WINDOW_MS) return;
      io.error(`${reason} again: exiting now, without finishing in-flight work`);
      io.exit(1);
      return;
    }
    firstAt = io.now();
    io.log(`${reason}: finishing in-flight work and stopping...`);
    void stopInOrder(steps).then((problems) => {
      if (problems.length === 0) {
        io.log('stopped cleanly');
        io.exit(0);
        return;
      }
      io.error(`stopped, but not cleanly:\n${problems.map((line) => `  - ${line}`).join('\n')}`);
      io.exit(1);
    });
  };
}
