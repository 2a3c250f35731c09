/**
 * The processes `npm start` put between the user and this one: npm, the `sh -c` it runs the
 * script in, and tsx. npm passes a SIGTERM on to that shell only, and the shell dies of it
 * without passing it on, which would leave this process (and so DynamoDB Local) serving with
 * nothing above it. Watching those launchers lets the service stop whichever of them is ended.
 */
import { readFileSync } from 'node:fs';

/** How far up to look for npm: npm → sh → tsx → node is three levels. */
const MAX_DEPTH = 6;

export interface ProcessInfo {
  readonly ppid: number;
  /** The process's initial environment (what it was started with). */
  readonly environ: ReadonlyMap<string, string>;
}

/** Reads a process from Linux's /proc; undefined when it is gone or unreadable. */
export function procInfo(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may contain spaces; the fields after it are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const environ = new Map<string, string>();
    for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const at = entry.indexOf('=');
      if (at > 0) environ.set(entry.slice(0, at), entry.slice(at + 1));
    }
    return { ppid, environ };
  } catch {
    return undefined;
  }
}

/**
 * The pids of the launchers of this npm script, nearest first, ending with npm itself: the
 * ancestors started with this script's `npm_lifecycle_event` and `npm_lifecycle_script`, plus
 * the first one that was not (the npm that runs the script). Empty when not run by npm, or
 * where the process tree cannot be read (no /proc).
 */
export function npmLaunchers(
  env: NodeJS.ProcessEnv = process.env,
  startPid: number = process.ppid,
  info: (pid: number) => ProcessInfo | undefined = procInfo,
): number[] {
  const event = env.npm_lifecycle_event;
  const script = env.npm_lifecycle_script;
  if (event === undefined || script === undefined) return [];
  const chain: number[] = [];
  let pid = startPid;
  for (let depth = 0; depth < MAX_DEPTH && pid > 1; depth += 1) {
    const found = info(pid);
    if (found === undefined) return [];
    chain.push(pid);
    const partOfScript =
      found.environ.get('npm_lifecycle_event') === event &&
      found.environ.get('npm_lifecycle_script') === script;
    if (!partOfScript) return chain; // this is npm
    pid = found.ppid;
  }
  return [];
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Calls `onGone` once, when any of `pids` has exited. Returns a function that stops watching. */
export function watchLaunchers(
  pids: readonly number[],
  onGone: (pid: number) => void,
  intervalMs = 250,
): () => void {
  if (pids.length === 0) return () => undefined;
  const timer = setInterval(() => {
    const gone = pids.find((pid) => !isAlive(pid));
    if (gone === undefined) return;
    clearInterval(timer);
    onGone(gone);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
