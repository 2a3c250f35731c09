/**
 * `npm start` run as a user runs it, for the end-to-end tests: in a process group of its own
 * (like a terminal job), with what it prints kept, and everything it started killed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../local/backends/ports.js';
import { javaProcessesFor, processInfo } from './processes.js';

/**
 * Waits on the wall clock. Only these end-to-end tests do: `npm start` is a process of its own on
 * the real clock (its pages go stale in real seconds), which no virtual clock can reach.
 */
export const wallClockSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export interface Started {
  readonly child: ChildProcess;
  readonly dataDir: string;
  readonly url: string;
  readonly dynamodb: string;
  readonly s3: string;
  readonly sqs: string;
  /** Resolves with npm's exit code once every process holding its output has exited. */
  readonly closed: Promise<number | null>;
  /** Started for several tests (in beforeAll): stopped after all of them, not after each. */
  readonly shared: boolean;
  output(): string;
}

/** Everything the tests started and has not exited yet. */
const running = new Set<Started>();

/** Kills the process group (npm, sh, tsx, node) and any DynamoDB Local of what `which` picks. */
export async function stopStarted(which: (started: Started) => boolean): Promise<void> {
  for (const started of [...running].filter(which)) {
    running.delete(started);
    const pgid = started.child.pid ?? 0;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
    for (const pid of javaProcessesFor(started.dataDir)) process.kill(pid, 'SIGKILL');
    await within(started.closed, 5_000).catch(() => undefined);
  }
}

/** `promise`, or a rejection once `ms` have passed (the timer never outlives the wait). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Starts `npm start` and resolves once it prints its ready line. */
export async function npmStart(options: {
  dataDir: string;
  port?: number;
  env?: Record<string, string>;
  shared?: boolean;
}): Promise<Started> {
  const { dataDir } = options;
  const child = spawn('npm', ['start'], {
    env: {
      ...process.env,
      PORT: String(options.port ?? (await freePort())),
      ISR_LOCAL_DATA_DIR: dataDir,
      ...options.env,
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const closed = new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  );
  const started: Started = {
    child,
    dataDir,
    closed,
    shared: options.shared ?? false,
    output: () => output,
    get url() {
      return /ISR ready on (\S+)/.exec(output)?.[1] ?? '';
    },
    get dynamodb() {
      return /dynamodb: (\S+)/.exec(output)?.[1] ?? '';
    },
    get s3() {
      return /s3: (\S+)/.exec(output)?.[1] ?? '';
    },
    get sqs() {
      return /sqs: (\S+)/.exec(output)?.[1] ?? '';
    },
  };
  running.add(started);
  await until(
    () => output,
    (text) => /ISR ready on \S+/.test(text) || child.exitCode !== null,
    90_000,
  );
  if (!/ISR ready on \S+/.test(output)) throw new Error(`npm start did not get ready:\n${output}`);
  return started;
}

/** Waits for every process that held npm's output to exit; fails if that takes too long. */
export async function exited(started: Started, timeoutMs = 20_000): Promise<number | null> {
  const code = await within(started.closed, timeoutMs).catch(() => {
    throw new Error(`npm start still running after ${timeoutMs} ms:\n${started.output()}`);
  });
  running.delete(started);
  return code;
}

/** Ctrl-C: SIGINT to the whole process group, as a terminal sends it. */
export async function ctrlC(started: Started): Promise<string> {
  process.kill(-(started.child.pid ?? 0), 'SIGINT');
  await exited(started);
  return started.output();
}

/** The DynamoDB Local JVM of a running `npm start`, and the node process that started it. */
export function serviceProcesses(started: Started): { java: number; node: number } {
  const [java, ...others] = javaProcessesFor(started.dataDir);
  if (java === undefined || others.length > 0)
    throw new Error(`expected one DynamoDB Local, found ${others.length + (java ? 1 : 0)}`);
  const node = processInfo(java)?.ppid;
  if (node === undefined) throw new Error('DynamoDB Local has no parent');
  return { java, node };
}

/** Polls `probe` until `done` says so; fails with the last value after `timeoutMs`. */
export async function until<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last: ${JSON.stringify(value)}`);
    await wallClockSleep(100);
  }
}
