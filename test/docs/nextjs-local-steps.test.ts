/**
 * docs/NEXTJS.md's "Run it locally", run as written against the fixture app: its settings with
 * only APP_DIR and the ports changed, its next.config.js with this repository's path, its
 * `next build` reusing the fixture's build, `next start` and `npm start` as terminal jobs, and
 * each check's output held to what the page says it prints.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort } from '../../local/backends/ports.js';
import {
  docSteps,
  poll,
  printsMatch,
  runShell,
  serveShell,
  userEnv,
  type DocStep,
  type Served,
} from '../helpers/doc-steps.js';
import { ensureNextBuild, NEXT_APP_DIR, NEXT_DIST_DIR } from '../helpers/next-build.js';
import { javaProcessesFor } from '../local/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const steps = docSteps(new URL('../../docs/NEXTJS.md', import.meta.url), 'nextjs-local');
const ofKind = (kind: string) => steps.filter((step) => step.kind === kind);
const checks = steps.filter((step) => step.kind.startsWith('check'));
const NODE_MODULES = dirname(dirname(createRequire(import.meta.url).resolve('next/package.json')));
/** The page's placeholder for this repository's path in its next.config.js. */
const REPO_PLACEHOLDER = '/path/to/facetheory-isr';
const READY_ATTEMPTS = 600;
const RETRY_ATTEMPTS = 50;
const POLL_MS = 200;

const folder = mkdtempSync(join(tmpdir(), 'isr-nextjs-doc-'));
const appDir = join(folder, 'app');
const dataDir = join(folder, 'data');
const served: Served[] = [];
/** `next build` as the page writes it, answered by the fixture's build (made once per run). */
const builds = join(folder, 'next-builds');
let prelude = '';
let isrPort = 0;
let nextPort = 0;
let env: NodeJS.ProcessEnv = {};
const outputs: string[] = [];

/** A user's app folder: the fixture's sources and build, next and react installed. */
function copyApp(): void {
  for (const name of ['app', 'lib', 'public', 'jsconfig.json']) {
    cpSync(join(NEXT_APP_DIR, name), join(appDir, name), { recursive: true });
  }
  cpSync(NEXT_DIST_DIR, join(appDir, '.next'), { recursive: true });
  symlinkSync(NODE_MODULES, join(appDir, 'node_modules'), 'dir');
}

/** The page's settings, then only APP_DIR and the ports, then the `next build` stand-in. */
function preludeOf(settings: DocStep, isrPort: number, nextPort: number): string {
  return [
    settings.code,
    `APP_DIR='${appDir}'`,
    `ISR_PORT=${isrPort}`,
    `NEXT_PORT=${nextPort}`,
    `npx() { if [ "$1 $2" = "next build" ]; then echo "$PWD" >> '${builds}'; else command npx "$@"; fi; }`,
    '',
  ].join('\n');
}

/** Starts a serve step and waits for what the page says to wait for, a bounded number of times. */
async function serve(step: DocStep, isrPort: number, nextPort: number): Promise<void> {
  const job = serveShell(prelude + step.code, ROOT, env);
  served.push(job);
  const ready = step.code.includes('npm start')
    ? () => /ISR ready on \S+/.test(job.output())
    : () =>
        fetch(`http://127.0.0.1:${nextPort}/`).then(
          (reply) => reply.status === 200,
          () => false,
        );
  const up = await poll(async () => job.exited() || (await ready()), READY_ATTEMPTS, POLL_MS);
  if (!up || job.exited()) throw new Error(`not ready (port ${isrPort}):\n${job.output()}`);
}

beforeAll(async () => {
  await ensureNextBuild();
  copyApp();
  [isrPort, nextPort] = [await freePort(), await freePort()];
  const [settings] = ofKind('settings');
  if (settings === undefined) throw new Error('docs/NEXTJS.md has no settings step');
  prelude = preludeOf(settings, isrPort, nextPort);
  env = userEnv({ ISR_LOCAL_DATA_DIR: dataDir, NEXT_TELEMETRY_DISABLED: '1' });
  for (const step of steps) {
    if (step.kind === 'run') await runShell(prelude + step.code, ROOT, env);
    if (step.kind === 'next-config') {
      if (!step.code.includes(REPO_PLACEHOLDER)) throw new Error(`no ${REPO_PLACEHOLDER}`);
      writeFileSync(join(appDir, 'next.config.js'), step.code.replace(REPO_PLACEHOLDER, ROOT));
    }
    if (step.kind === 'serve') await serve(step, isrPort, nextPort);
  }
}, 300_000);

afterAll(async () => {
  for (const job of served.reverse()) await job.stop();
  for (const pid of javaProcessesFor(dataDir)) process.kill(pid, 'SIGKILL');
  rmSync(folder, { recursive: true, force: true });
});

const etagsOf = (text: string | undefined) =>
  [...(text ?? '').matchAll(/^etag: (\S+)/gim)].map((match) => match[1]);

/** The page's prints, and for a `check-until` an ETag the first check did not see. */
function printsAsSaid(step: DocStep, output: string): boolean {
  const seen = new Set(etagsOf(outputs[0]));
  const fresh = step.kind !== 'check-until' || etagsOf(output).every((tag) => !seen.has(tag));
  return fresh && printsMatch(step.prints ?? '', output);
}

/**
 * Runs a check; a `check-until` one again, a bounded number of times, until it prints what the
 * page says with an ETag the first check did not see (the page says: until its ETag changes).
 */
async function runCheck(step: DocStep): Promise<string> {
  let output = '';
  const attempts = step.kind === 'check-until' ? RETRY_ATTEMPTS : 1;
  await poll(
    async () => {
      output = await runShell(prelude + step.code, ROOT, env);
      return printsAsSaid(step, output);
    },
    attempts,
    POLL_MS,
  );
  return output;
}

describe("docs/NEXTJS.md's local steps, as written, with the fixture app", () => {
  it('has the steps a newcomer needs, the adapter built, next build run in APP_DIR', () => {
    expect(steps.map((step) => step.kind)).toEqual([
      'settings',
      'run',
      'next-config',
      'serve',
      'serve',
      'check',
      'check',
      'check',
      'check-until',
    ]);
    expect(checks.every((step) => step.prints !== undefined)).toBe(true);
    expect(readFileSync(join(ROOT, 'dist/next/index.mjs'), 'utf8')).toContain('revalidateTag');
    expect(readFileSync(builds, 'utf8').trim()).toBe(appDir);
  });

  it.each(checks.map((step, index) => [index + 1, step] as const))(
    'check %i prints what the page says',
    async (_, step) => {
      const output = await runCheck(step);
      outputs.push(output);
      const shown = output.replace(/\r\n/g, '\n');
      expect(printsAsSaid(step, output) ? step.prints : shown).toBe(step.prints);
    },
  );

  it("the app's revalidateTag reached the cache: a new render, through the adapter", () => {
    const [first] = etagsOf(outputs[0]);
    const [after] = etagsOf(outputs.at(-1));
    expect(first).toBeDefined();
    expect(after).toBeDefined();
    expect(after).not.toBe(first);
    expect(served[0]?.output()).toContain('"message":"revalidation accepted"');
  });

  it('negative control: without the preset, the RSC check fails (text/html)', async () => {
    const step = ofKind('serve').find((serveStep) => serveStep.code.includes('npm start'));
    const rsc = checks.find((check) => check.code.includes("'rsc: 1'"));
    const withoutPreset = step?.code.replace('ISR_PRESET=nextjs ', '');
    if (step === undefined || rsc === undefined || withoutPreset === step.code) {
      throw new Error('the page lost its npm start step, its RSC check or its preset');
    }
    await served[1]?.stop();
    await serve({ ...step, code: withoutPreset ?? '' }, isrPort, nextPort);
    const output = await runShell(prelude + rsc.code, ROOT, env);
    expect(output).toMatch(/^content-type: text\/html/im);
    expect(printsMatch(rsc.prints ?? '', output)).toBe(false);
  }, 120_000);
});
