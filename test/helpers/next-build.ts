/**
 * The fixture Next.js app's build, made at most once per test run: a stamp (the fixture's sources
 * and the versions of next and react) is written beside the output, and a build whose stamp
 * matches is reused. A lock file keeps parallel Jest workers from building it twice.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The fixture app's folder (its `.next` is the build output, git-ignored). */
export const NEXT_APP_DIR = fileURLToPath(new URL('../fixtures/next-app/', import.meta.url));
export const NEXT_DIST_DIR = join(NEXT_APP_DIR, '.next');
const STAMP_FILE = join(NEXT_DIST_DIR, 'fixture-stamp.txt');
const LOCK_FILE = join(NEXT_APP_DIR, '.build.lock');
/** Files under the fixture that are output, state or prose: never inputs of the build. */
const NOT_SOURCES = new Set(['.next', '.build.lock', 'README.md']);
const LOCK_POLL_MS = 250;
const LOCK_WAIT_LIMIT_MS = 10 * 60_000;

const require = createRequire(import.meta.url);
/** `node_modules/next/dist/bin/next`, run with this Node (no `npx`, no shell). */
export const NEXT_BIN = require.resolve('next/dist/bin/next');

/** The environment Next runs with here: production, no telemetry, never Jest's NODE_ENV=test. */
export function nextEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1', ...extra };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !NOT_SOURCES.has(entry.name))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return entry.isDirectory() ? sourceFiles(path) : [path];
    })
    .sort();
}

/** What the build is made from: every fixture source byte and the framework versions. */
export function fixtureStamp(appDir = NEXT_APP_DIR): string {
  const hash = createHash('sha256');
  for (const name of ['next', 'react', 'react-dom']) {
    const pkg = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
      version: string;
    };
    hash.update(`${name}@${pkg.version}\n`);
  }
  for (const file of sourceFiles(appDir)) {
    hash.update(`${relative(appDir, file)}\n`).update(readFileSync(file));
  }
  return hash.digest('hex');
}

function readStamp(): string | undefined {
  try {
    return readFileSync(STAMP_FILE, 'utf8');
  } catch {
    return undefined;
  }
}

function lockHolderAlive(): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(LOCK_FILE, 'utf8'));
  } catch {
    return true; // being created or just released: look again
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes the build lock (a file holding our pid), clearing one left by a dead process. */
async function acquireLock(): Promise<() => void> {
  const giveUpAt = Date.now() + LOCK_WAIT_LIMIT_MS;
  for (;;) {
    try {
      writeFileSync(LOCK_FILE, String(process.pid), { flag: 'wx' });
      return () => rmSync(LOCK_FILE, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (!lockHolderAlive()) rmSync(LOCK_FILE, { force: true });
    else if (Date.now() > giveUpAt) throw new Error(`the Next.js build lock ${LOCK_FILE} is held`);
    else await sleep(LOCK_POLL_MS);
  }
}

/**
 * Runs `node <bin> <args>` (a Next.js CLI) in `dir` to its end; resolves with its output, or
 * rejects with it when it fails.
 */
export function runNext(
  bin: string,
  dir: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: dir,
      env: nextEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`next ${args.join(' ')}: ${code}\n${output}`)),
    );
  });
}

/** Runs `next build` in the fixture; rejects with its output when it fails. */
const runNextBuild = () => runNext(NEXT_BIN, NEXT_APP_DIR, ['build', NEXT_APP_DIR]);

export interface NextBuild {
  readonly distDir: string;
  readonly stamp: string;
  /** False when a build with the same stamp was reused. */
  readonly built: boolean;
}

/** The fixture's build: reused when its stamp matches, otherwise built once under the lock. */
export async function ensureNextBuild(): Promise<NextBuild> {
  const stamp = fixtureStamp();
  if (readStamp() === stamp) return { distDir: NEXT_DIST_DIR, stamp, built: false };
  const release = await acquireLock();
  try {
    if (readStamp() === stamp) return { distDir: NEXT_DIST_DIR, stamp, built: false };
    rmSync(STAMP_FILE, { force: true });
    await runNextBuild();
    writeFileSync(STAMP_FILE, stamp);
    return { distDir: NEXT_DIST_DIR, stamp, built: true };
  } finally {
    release();
  }
}
