/**
 * A markdown page's runnable steps, for tests that run them as written: fenced blocks preceded by
 * `<!-- <marker>: <kind> -->`, each with what it prints (the `prints` block after it), run by sh
 * as a user's terminal would run them, long-running ones in a process group of their own.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { within } from '../local/npm-start.js';

export interface DocStep {
  /** The marker's kind: `settings`, `run`, `serve`, `check`, `check-until`, `next-config`, … */
  readonly kind: string;
  readonly code: string;
  /** The `prints` block that follows the step, if any: its expected output. */
  readonly prints?: string;
}

/** The marked blocks of `file`, in order, with each `prints` block folded into its step. */
export function docSteps(file: URL, marker: string): DocStep[] {
  const text = readFileSync(file, 'utf8');
  const pattern = new RegExp(
    `<!-- ${marker}: ([a-z-]+) -->\\s*\`\`\`[a-z]*\\n([\\s\\S]*?)\`\`\``,
    'g',
  );
  const steps: DocStep[] = [];
  for (const [, kind = '', code = ''] of text.matchAll(pattern)) {
    const last = steps.at(-1);
    if (kind !== 'prints') steps.push({ kind, code });
    else if (last === undefined)
      throw new Error(`${file.pathname}: a prints block before any step`);
    else steps[steps.length - 1] = { ...last, prints: code };
  }
  return steps;
}

/** Whether `actual` is `expected` line for line, `…` standing for any text (CRLF read as LF). */
export function printsMatch(expected: string, actual: string): boolean {
  const want = expected.trimEnd().split('\n');
  const got = actual.replace(/\r\n/g, '\n').trimEnd().split('\n');
  const escape = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return (
    want.length === got.length &&
    want.every((line, i) =>
      new RegExp(`^${line.split('…').map(escape).join('.*')}$`, 'i').test(got[i] ?? ''),
    )
  );
}

/** A user's shell environment: this one without what Jest and the test setup add. */
export function userEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(NODE_ENV|JEST_|POWERTOOLS_)/.test(name)),
  );
  return { ...env, ...extra };
}

/** Runs `script` with sh to its end (at most `timeoutMs`); resolves with its stdout. */
export function runShell(
  script: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', script], { cwd, env, timeout: timeoutMs }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stdout}${stderr}`)) : resolve(stdout),
    );
  });
}

const STOP_GRACE_MS = 20_000;

export interface Served {
  readonly child: ChildProcess;
  output(): string;
  exited(): boolean;
  /** Ctrl-C to the process group (sh, npx/npm, node), then SIGKILL if it is still there. */
  stop(): Promise<void>;
}

/** Starts `script` with sh in a process group of its own, as a terminal runs a job. */
export function serveShell(script: string, cwd: string, env: NodeJS.ProcessEnv): Served {
  const child = spawn('sh', ['-c', script], { cwd, env, detached: true, stdio: 'pipe' });
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-100_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid ?? 0), name);
    } catch {
      // the group is gone already
    }
  };
  const kill = () => signal('SIGKILL');
  process.once('exit', kill);
  return {
    child,
    output: () => log,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    async stop() {
      process.off('exit', kill);
      signal('SIGINT'); // Ctrl-C first: npm start stops its backends in order
      await within(closed, STOP_GRACE_MS).catch(kill);
      await within(closed, STOP_GRACE_MS).catch(() => undefined);
    },
  };
}

/** Polls `probe` up to `attempts` times, `everyMs` apart, until it is true. */
export async function poll(
  probe: () => boolean | Promise<boolean>,
  attempts: number,
  everyMs: number,
): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return false;
}
