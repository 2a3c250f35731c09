/**
 * A markdown page's runnable steps, for tests that run them as written: fenced blocks preceded by
 * `<!-- <marker>: <kind> -->`, each with what it prints (the `prints` block after it), run by sh
 * as a user's terminal would run them, long-running ones in a process group of their own.
 *
 * THE MARKING CONVENTION (issue 35). Every fenced block of README.md and docs/*.md carries a
 * marker on its own line before the fence (a blank line between is fine), and
 * test/docs/doc-blocks.unit.test.ts fails on a block without one, or with a kind it does not
 * know. The marker `doc` is run by test/helpers/doc-session.ts, one clone and one `npm start`
 * per session (test/docs/first-hour.test.ts runs README, OPERATIONS and REVALIDATION in order):
 *   <!-- doc: setup -->       the README's set-up lines: `npm ci && npm start` is served, the
 *                             `npm test` line is what .ci/run runs
 *   <!-- doc: serve -->       a job a terminal keeps running (`npm start`), ready once it prints
 *                             `ISR ready on`; a later serve step stops the running one (Ctrl-C)
 *   <!-- doc: run -->         run by sh (`set -e`) in the clone, as pasted: it must exit 0
 *   <!-- doc: prints -->      what the step before prints: `…` is any text within a line, a line
 *                             `⋮` any number of lines
 *   <!-- doc: synopsis -->    one command a line, `[optional parts]` included and each
 *                             `<placeholder>` filled by the session's test from the running
 *                             service (what a reader copies from an earlier output): each must exit 0
 *   <!-- doc: aws synth -->   needs an AWS account: each `npx cdk deploy` (synth, diff,
 *                             bootstrap) line is synthesized with its `-c` context instead
 *                             (test/docs/deploy-synth.test.ts)
 *   <!-- doc: aws <test> -->  needs an AWS account: <test>, which reads this page, checks it
 *                             with a mocked client
 *   <!-- doc: checked-by <test> -->  code another test runs (it must read this page)
 *   <!-- doc: figure -->      a diagram, a format or a request body: nothing to run
 * Only ports (`:3000`) and folders (the clone, its node_modules) are substituted; `npm ci` links
 * the installed tree and runs the lifecycle scripts `npm ci` runs. Other markers
 * (`<!-- nextjs-local: … -->`) belong to the test that names them.
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

/** A fenced block of a markdown page, with the marker before it if it has one. */
export interface FencedBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** `<!-- name: kind arg -->` on the closest non-blank line before the fence. */
  readonly marker?: { readonly name: string; readonly kind: string; readonly arg?: string };
}

const MARKER = /^<!-- ([a-z][a-z-]*): ([a-z][a-z-]*)(?: (.+?))? -->$/;
const FENCE = /^(`{3,}|~{3,})\s*([^\s`]*)/;

/** Every fenced block of `text`, in order, with its marker. */
export function fencedBlocks(text: string): FencedBlock[] {
  const lines = text.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? '');
    if (open === null) continue;
    const fence = open[1] ?? '```';
    let end = i + 1;
    while (end < lines.length && !(lines[end] ?? '').startsWith(fence)) end++;
    let before = i - 1;
    while (before >= 0 && (lines[before] ?? '').trim() === '') before--;
    const found = MARKER.exec((lines[before] ?? '').trim());
    const marker =
      found === null
        ? undefined
        : { name: found[1] ?? '', kind: found[2] ?? '', ...(found[3] ? { arg: found[3] } : {}) };
    const code = lines.slice(i + 1, end).join('\n');
    blocks.push({ line: i + 1, lang: open[2] ?? '', code: `${code}\n`, ...(marker && { marker }) });
    i = end;
  }
  return blocks;
}

/** A line of a `prints` block that stands for any number of lines (the headers of `curl -i`). */
export const ANY_LINES = '⋮';

/**
 * Whether `actual` is `expected` line for line, `…` standing for any text within a line and a
 * line `⋮` for any number of lines (CRLF read as LF).
 */
export function printsMatch(expected: string, actual: string): boolean {
  const want = expected.trimEnd().split('\n');
  const got = actual.replace(/\r\n/g, '\n').trimEnd().split('\n');
  const escape = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const lineMatches = (line: string, text: string | undefined) =>
    new RegExp(`^${line.split('…').map(escape).join('.*')}$`, 'i').test(text ?? '');
  const from = (i: number, j: number): boolean => {
    if (i === want.length) return j === got.length;
    if (want[i] === ANY_LINES) {
      for (let k = j; k <= got.length; k++) if (from(i + 1, k)) return true;
      return false;
    }
    return j < got.length && lineMatches(want[i] ?? '', got[j]) && from(i + 1, j + 1);
  };
  return from(0, 0);
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
