/**
 * Runs the `doc`-marked steps of pages in order as a reader at a terminal would (the marking
 * convention is in doc-steps.ts): in a fresh clone of this repository (its tracked and new
 * files, not dist/ or .local/), its installed tree linked as node_modules, one `npm start` for
 * the whole session (a serve step replaces it, Ctrl-C first). Between steps it waits, as a
 * reader does, until the regeneration queue is drained, so a step never races the one before.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { freePort } from '../../local/backends/ports.js';
import { LOCAL_CREDENTIALS } from '../../local/backends/local-aws.js';
import { readEndpointsFile } from '../../local/endpoints-file.js';
import { javaProcessesFor } from '../local/processes.js';
import {
  fencedBlocks,
  poll,
  printsMatch,
  runShell,
  serveShell,
  userEnv,
  type Served,
} from './doc-steps.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

/**
 * The pages test/docs/first-hour.test.ts runs in one session, in the order a new user reads
 * them. A page with runnable steps must be in a session (test/docs/doc-blocks.unit.test.ts).
 */
export const FIRST_HOUR_DOCS = ['README.md', 'docs/OPERATIONS.md', 'docs/REVALIDATION.md'] as const;

/** The kinds a session runs; the other `doc` kinds are checked elsewhere or not run. */
export const RUNNABLE_KINDS = ['setup', 'serve', 'run', 'synopsis'] as const;
export type RunnableKind = (typeof RUNNABLE_KINDS)[number];
/** Every kind of the `doc` marker (doc-steps.ts says what each means). */
export const DOC_KINDS = [...RUNNABLE_KINDS, 'prints', 'aws', 'checked-by', 'figure'] as const;

export interface SessionStep {
  /** The page, as a repository path. */
  readonly doc: string;
  /** The line of its opening fence. */
  readonly line: number;
  readonly kind: RunnableKind;
  readonly code: string;
  /** The `prints` block after it: its expected output. */
  readonly prints?: string;
}

const isRunnable = (kind: string): kind is RunnableKind =>
  (RUNNABLE_KINDS as readonly string[]).includes(kind);

/** The runnable `doc` steps of `docs`, in order, each with the `prints` block after it. */
export function sessionSteps(docs: readonly string[]): SessionStep[] {
  const steps: SessionStep[] = [];
  for (const doc of docs) {
    for (const block of fencedBlocks(readFileSync(join(ROOT, doc), 'utf8'))) {
      if (block.marker?.name !== 'doc') continue;
      const { kind } = block.marker;
      const last = steps.at(-1);
      if (kind === 'prints') {
        if (last?.doc !== doc || last.kind !== 'run') {
          throw new Error(`${doc}:${block.line}: a prints block after no run step`);
        }
        steps[steps.length - 1] = { ...last, prints: block.code };
      } else if (isRunnable(kind)) {
        steps.push({ doc, line: block.line, kind, code: block.code });
      }
    }
  }
  return steps;
}

/**
 * `npm ci` in the clone: the installed tree linked (the one folder substituted), then the
 * lifecycle scripts `npm ci` runs in a project, which decide whether the steps after it work.
 */
const prelude = (nodeModules: string) => `npm() {
  if [ "$1" = ci ]; then
    ln -sfn '${nodeModules}' node_modules || return
    for script in preinstall install postinstall prepare; do
      command npm run --if-present "$script" || return
    done
  else
    command npm "$@"
  fi
}
`;

/** A line of a synopsis as it is run: no comment, optional parts in. */
const synopsisCommand = (line: string) =>
  line
    .replace(/\s+#\s.*$/, '')
    .replace(/\[([^\]]*)\]/g, '$1')
    .trim();

export interface SessionOptions {
  /** The value of a synopsis' `<name>`, read from the running service as a reader would. */
  readonly fill: (name: string, session: DocSession) => Promise<string>;
}

export class DocSession {
  readonly folder = mkdtempSync(join(tmpdir(), 'isr-doc-session-'));
  readonly clone = join(this.folder, 'clone');
  /** What each step printed, in order (a placeholder may be read from them). */
  readonly outputs: string[] = [];
  port = 0;
  #served: Served | undefined;

  constructor(private readonly options: SessionOptions) {}

  /** The clone: the repository's tracked and new files as a fresh clone has them. */
  async open(): Promise<void> {
    const files = execFileSync(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    )
      .split('\0')
      .filter((file) => file !== '' && existsSync(join(ROOT, file)));
    for (const file of files) {
      mkdirSync(dirname(join(this.clone, file)), { recursive: true });
      copyFileSync(join(ROOT, file), join(this.clone, file));
    }
    this.port = await freePort();
  }

  /** A reader's shell: theirs, the port substituted, npx's cache in the session's folder. */
  env(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
    return userEnv({
      PORT: String(this.port),
      npm_config_cache: join(this.folder, 'npm-cache'),
      NO_COLOR: '1',
      ...extra,
    });
  }

  /** The step's code with the session's port for 3000, after the `npm ci` stand-in. */
  script(code: string): string {
    const ported = code.replace(/\b(localhost|127\.0\.0\.1):3000\b/g, `$1:${this.port}`);
    return prelude(join(ROOT, 'node_modules')) + ported;
  }

  /** Runs `code` to its end in the clone (`set -e`); rejects on a non-zero exit. */
  async shell(code: string, env: Readonly<Record<string, string>> = {}): Promise<string> {
    const output = await runShell(`set -e\n${this.script(code)}`, this.clone, this.env(env));
    this.outputs.push(output);
    return output;
  }

  /** Runs one step; resolves with what it printed (a serve step: its output once ready). */
  async run(step: SessionStep): Promise<string> {
    switch (step.kind) {
      case 'setup':
        return this.setup(step);
      case 'serve':
        return this.serve(step.code);
      case 'run': {
        await this.settle();
        const output = await this.shell(step.code);
        if (step.prints !== undefined && !printsMatch(step.prints, output)) {
          throw new Error(`prints\n${output}\ninstead of\n${step.prints}`);
        }
        return output;
      }
      case 'synopsis': {
        const outputs: string[] = [];
        for (const line of step.code.split('\n').map(synopsisCommand).filter(Boolean)) {
          await this.settle();
          const filled = await this.filled(line);
          outputs.push(`$ ${filled}\n${await this.shell(filled)}`);
        }
        return outputs.join('\n');
      }
    }
  }

  /** `npm ci && npm start` served; the `npm test` line is what CI runs (checked, not run here). */
  private async setup(step: SessionStep): Promise<string> {
    const lines = step.code.split('\n').map(synopsisCommand).filter(Boolean);
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    for (const line of lines.filter((l) => /\bnpm test\b/.test(l))) {
      if (!line.split('&&').every((part) => ci.includes(part.trim()))) {
        throw new Error(`.ci/run does not run "${line}"`);
      }
    }
    const start = lines.find((line) => /\bnpm start\b/.test(line));
    if (start === undefined) throw new Error('a setup block without npm start');
    return this.serve(start);
  }

  /** Starts `code` as a terminal job (Ctrl-C to the one running first) until it is ready. */
  private async serve(code: string): Promise<string> {
    await this.stopServed();
    const job = serveShell(this.script(code), this.clone, this.env());
    this.#served = job;
    const ready = await poll(() => job.exited() || /ISR ready on \S+/.test(job.output()), 900, 200);
    if (!ready || job.exited()) throw new Error(`not ready:\n${job.output()}`);
    return job.output();
  }

  /** What the served job printed so far. */
  servedOutput(): string {
    return this.#served?.output() ?? '';
  }

  /** Each `<name>` of a synopsis line, filled by the session's test. */
  private async filled(line: string): Promise<string> {
    let out = line;
    for (const [placeholder, name] of line.matchAll(/<([a-z_]+)>/g)) {
      out = out.replace(placeholder, await this.options.fill(name ?? '', this));
    }
    return out;
  }

  /** Waits, as a reader does between steps, until no regeneration is queued or in flight. */
  async settle(): Promise<void> {
    const found = await readEndpointsFile(join(this.clone, '.local')).catch(() => undefined);
    if (found === undefined) return;
    const sqs = new SQSClient({
      region: found.region,
      endpoint: found.endpoints.sqs,
      credentials: LOCAL_CREDENTIALS,
    });
    try {
      await poll(
        async () => {
          const { Attributes: a } = await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: found.queueUrl,
              AttributeNames: [
                'ApproximateNumberOfMessages',
                'ApproximateNumberOfMessagesNotVisible',
              ],
            }),
          );
          return (
            Number(a?.ApproximateNumberOfMessages) +
              Number(a?.ApproximateNumberOfMessagesNotVisible) ===
            0
          );
        },
        150,
        200,
      );
    } finally {
      sqs.destroy();
    }
  }

  private async stopServed(): Promise<void> {
    await this.#served?.stop();
    this.#served = undefined;
  }

  /** Ctrl-C to the served job, no DynamoDB Local left behind, the clone removed. */
  async close(): Promise<void> {
    await this.stopServed();
    for (const pid of javaProcessesFor(join(this.clone, '.local'))) process.kill(pid, 'SIGKILL');
    rmSync(this.folder, { recursive: true, force: true });
  }
}
