/**
 * The fixture Next.js 16 app under a real `next start`, on a free port of 127.0.0.1. Each start
 * runs from its own copy of the build, so ISR state written at run time (route cache, fetch
 * cache) never leaks into another test file or into the next run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { ensureNextBuild, NEXT_APP_DIR, NEXT_BIN, NEXT_DIST_DIR, nextEnv } from './next-build.js';

export { ensureNextBuild } from './next-build.js';

/** Build output a server does not read: the bundler's cache, traces. */
const NOT_COPIED = ['cache/turbopack', 'cache/images', 'trace', 'trace-build'].map((path) =>
  join(NEXT_DIST_DIR, path),
);
const NODE_MODULES = dirname(dirname(createRequire(import.meta.url).resolve('next/package.json')));

export interface NextApp {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** The build's id and its preview-mode id (the `x-prerender-revalidate` secret). */
  readonly buildId: string;
  readonly previewModeId: string;
  /** A Server Action's id (the `Next-Action` header) by its exported name. */
  actionId(exportedName: string): string;
  /** What `next start` has printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

export interface StartNextAppOptions {
  /** Extra environment, e.g. FIXTURE_CACHE_HANDLER (see the fixture's next.config.js). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * An app folder with its own build and node_modules (test/helpers/next-outside-app.ts), served
   * where it is and kept; default: a fresh copy of the fixture's build, removed on stop.
   */
  readonly appDir?: string;
}

/**
 * A copy of the build in a temporary folder, with the repository's node_modules linked in. The
 * copy gets new file times, so prerendered pages count their age from this start, not the build.
 */
function copyBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'next-app-'));
  for (const name of ['next.config.js', 'public']) {
    cpSync(join(NEXT_APP_DIR, name), join(dir, name), { recursive: true });
  }
  cpSync(NEXT_DIST_DIR, join(dir, '.next'), {
    recursive: true,
    filter: (source) =>
      !NOT_COPIED.some((skip) => source === skip || source.startsWith(skip + sep)),
  });
  symlinkSync(NODE_MODULES, join(dir, 'node_modules'), 'dir');
  return dir;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('close', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Resolves with the URL `next start` prints once it says Ready; rejects if it exits first. */
function waitForReady(child: ChildProcess, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onData = () => {
      const url = /- Local:\s+(http:\/\/\S+)/.exec(output())?.[1];
      if (url !== undefined && output().includes('Ready in')) {
        child.stdout?.off('data', onData);
        child.off('close', onClose);
        resolve(url.replace(/\/$/, ''));
      }
    };
    const onClose = (code: number | null) =>
      reject(new Error(`next start exited (${code}) before it was ready:\n${output()}`));
    child.stdout?.on('data', onData);
    child.once('close', onClose);
  });
}

/** Builds the fixture if needed (once per run), then starts `next start` from a fresh copy. */
export async function startNextApp(options: StartNextAppOptions = {}): Promise<NextApp> {
  if (options.appDir === undefined) await ensureNextBuild();
  const dir = options.appDir ?? copyBuild();
  const bin =
    options.appDir === undefined ? NEXT_BIN : join(dir, 'node_modules/next/dist/bin/next');
  const child = spawn(process.execPath, [bin, 'start', dir, '-H', '127.0.0.1', '-p', '0'], {
    cwd: dir,
    env: nextEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-50_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await stopChild(child);
    if (options.appDir === undefined) rmSync(dir, { recursive: true, force: true });
  };
  let url: string;
  try {
    url = await waitForReady(child, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  const actions = readJson<{ node: Record<string, { exportedName: string }> }>(
    join(dir, '.next/server/server-reference-manifest.json'),
  ).node;
  const preview = readJson<{ preview: { previewModeId: string } }>(
    join(dir, '.next/prerender-manifest.json'),
  ).preview;
  return {
    url,
    buildId: readFileSync(join(dir, '.next/BUILD_ID'), 'utf8').trim(),
    previewModeId: preview.previewModeId,
    actionId(exportedName) {
      const id = Object.keys(actions).find((key) => actions[key]?.exportedName === exportedName);
      if (id === undefined) throw new Error(`no Server Action exported as ${exportedName}`);
      return id;
    },
    output: () => log,
    stop,
  };
}
