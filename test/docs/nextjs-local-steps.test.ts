/**
 * docs/NEXTJS.md's "Run it locally", run as printed in two app folders outside this repository,
 * made from the fixture app (test/helpers/next-outside-app.ts): one with `"type": "module"` and
 * the page's ESM next.config.js, one without a `type` and its CommonJS one. Only APP_DIR and the
 * ports change. Every step is the real one: `npm pack` and `npm install` of the tarball, `next
 * build` with Next's default bundler, `next start` and `npm start` as terminal jobs, and each
 * check's output held to what the page says it prints. The page's two other config snippets
 * (`'use cache'` handlers, a `headers()` rule) are evaluated in the ESM app.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
import { ask } from '../helpers/next-http.js';
import { createOutsideApp } from '../helpers/next-outside-app.js';
import { javaProcessesFor } from '../local/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const PAGE = new URL('../../docs/NEXTJS.md', import.meta.url);
const steps = docSteps(PAGE, 'nextjs-local');
const ofKind = (kind: string) => steps.filter((step) => step.kind === kind);
const checks = steps.filter((step) => step.kind.startsWith('check'));
/** The kinds whose blocks are sh (the others are next.config.js code). */
const SH_KINDS = ['settings', 'run', 'serve', 'check', 'check-until'];
/** Polls of a serve step: `next build` runs in it, ~30 s alone, minutes on a busy machine. */
const READY_ATTEMPTS = 3_000;
const RETRY_ATTEMPTS = 50;
const POLL_MS = 200;
/** `npm pack` builds the package first: minutes on a cold, busy machine. */
const RUN_TIMEOUT_MS = 600_000;
const SETUP_TIMEOUT_MS = 1_200_000;

const folder = mkdtempSync(join(tmpdir(), 'isr-nextjs-doc-'));
const dataDir = join(folder, 'data');
/**
 * The fixture's 'use cache' page needs `experimental.useCache`, a setting of the app's own that
 * the page keeps in "the rest of your next.config.js"; its blocks are the whole file here.
 */
const NEEDS_OWN_CONFIG = 'app/data/use-cache';
/** The two apps: ESM (`"type": "module"`) and CommonJS (no `type`, as create-next-app writes). */
const apps = {
  esm: { dir: join(folder, 'esm-app'), packageJson: { type: 'module' } },
  cjs: { dir: join(folder, 'cjs-app'), packageJson: {} },
} as const;
type AppKind = keyof typeof apps;
const served: Served[] = [];
let env: NodeJS.ProcessEnv = {};
const ports = { isr: 0, esm: 0, cjs: 0 };
const outputs: string[] = [];

const only = (kind: string): DocStep => {
  const [step, more] = ofKind(kind);
  if (step === undefined || more !== undefined) throw new Error(`NEXTJS.md: not one ${kind} step`);
  return step;
};
const nextServe = () => ofKind('serve').find((step) => step.code.includes('next start'));
const npmServe = () => ofKind('serve').find((step) => step.code.includes('npm start'));

/** The page's settings, then only APP_DIR and the ports, as a user of `app` has them. */
const preludeOf = (app: AppKind): string =>
  [
    only('settings').code,
    `APP_DIR='${apps[app].dir}'`,
    `ISR_PORT=${ports.isr}`,
    `NEXT_PORT=${ports[app]}`,
    '',
  ].join('\n');

/** Starts a serve step and waits for what the page says to wait for, a bounded number of times. */
async function serve(step: DocStep | undefined, app: AppKind): Promise<Served> {
  if (step === undefined) throw new Error('NEXTJS.md lost a serve step');
  const job = serveShell(preludeOf(app) + step.code, ROOT, env);
  served.push(job);
  const ready = step.code.includes('npm start')
    ? () => /ISR ready on \S+/.test(job.output())
    : () =>
        fetch(`http://127.0.0.1:${ports[app]}/`).then(
          (reply) => reply.status === 200,
          () => false,
        );
  const up = await poll(async () => job.exited() || (await ready()), READY_ATTEMPTS, POLL_MS);
  if (!up || job.exited()) throw new Error(`not ready (${app}):\n${job.output()}`);
  return job;
}

/** Steps 2 and 3 in `app`: the package packed and installed, next.config.js as printed. */
async function install(app: AppKind): Promise<void> {
  createOutsideApp(apps[app].dir, {
    release: 'newest',
    packageJson: apps[app].packageJson,
    leaveOut: [NEEDS_OWN_CONFIG],
  });
  await runShell(preludeOf(app) + only('run').code, ROOT, env, RUN_TIMEOUT_MS);
  writeFileSync(join(apps[app].dir, 'next.config.js'), only(`next-config-${app}`).code);
}

beforeAll(async () => {
  [ports.isr, ports.esm, ports.cjs] = [await freePort(), await freePort(), await freePort()];
  env = userEnv({
    ISR_LOCAL_DATA_DIR: dataDir,
    NEXT_TELEMETRY_DISABLED: '1',
    // The npm cache first (the repository's npm ci filled it); the registry only for the rest.
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  });
  await install('esm');
  await serve(nextServe(), 'esm');
  await serve(npmServe(), 'esm');
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  for (const job of served.reverse()) await job.stop();
  for (const pid of javaProcessesFor(dataDir)) process.kill(pid, 'SIGKILL');
  rmSync(folder, { recursive: true, force: true });
});

/** The adapter as installed in the ESM app. */
const installedAdapter = () => join(apps.esm.dir, 'node_modules', 'facetheory-isr', 'dist', 'next');

/** Runs `code` as an ES module in the ESM app's folder (so it resolves the app's packages). */
async function evaluateInApp(name: string, code: string): Promise<string> {
  writeFileSync(join(apps.esm.dir, name), code);
  return runShell(`node ${name}`, apps.esm.dir, env);
}

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
      output = await runShell(preludeOf('esm') + step.code, ROOT, env);
      return printsAsSaid(step, output);
    },
    attempts,
    POLL_MS,
  );
  return output;
}

describe("docs/NEXTJS.md's local steps, as printed, in an ESM app outside the repository", () => {
  it('has the steps a newcomer needs, and every sh block of the page is one of them', () => {
    expect(steps.map((step) => step.kind)).toEqual([
      'settings',
      'run',
      'next-config-esm',
      'next-config-cjs',
      'serve',
      'serve',
      'check',
      'check',
      'check',
      'check-until',
      'use-cache-config',
      'headers-config',
    ]);
    expect(checks.every((step) => step.prints !== undefined)).toBe(true);
    const shBlocks = readFileSync(PAGE, 'utf8').match(/^```sh$/gm) ?? [];
    expect(shBlocks.length).toBe(steps.filter((step) => SH_KINDS.includes(step.kind)).length);
  });

  it("the page's 'use cache' config names the installed adapter for every handler", async () => {
    const probe = `${only('use-cache-config').code}\nconsole.log(JSON.stringify(nextConfig));\n`;
    const config = JSON.parse(await evaluateInApp('use-cache.mjs', probe)) as {
      cacheHandler: string;
      cacheHandlers: Record<string, string>;
    };
    const installed = pathToFileURL(join(installedAdapter(), 'index.mjs')).href;
    expect(config).toEqual({
      cacheHandler: installed,
      cacheHandlers: { default: installed, remote: installed },
    });
  });

  it("the page's headers() rule is a config entry Next reads: Cache-Tag on the posts", async () => {
    const probe = `const nextConfig = {\n${only('headers-config').code}};\nconsole.log(JSON.stringify(await nextConfig.headers()));\n`;
    expect(JSON.parse(await evaluateInApp('headers.mjs', probe))).toEqual([
      { source: '/blog/:slug', headers: [{ key: 'Cache-Tag', value: 'posts' }] },
    ]);
  });

  it("installed the packed package in the app's own node_modules, no tarball left here", () => {
    expect(readFileSync(join(installedAdapter(), 'index.mjs'), 'utf8')).toContain('revalidateTag');
    expect(readdirSync(ROOT).filter((name) => name.endsWith('.tgz'))).toEqual([]);
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
    const step = npmServe();
    const rsc = checks.find((check) => check.code.includes("'rsc: 1'"));
    const withoutPreset = step?.code.replace('ISR_PRESET=nextjs ', '');
    if (step === undefined || rsc === undefined || withoutPreset === step.code) {
      throw new Error('the page lost its npm start step, its RSC check or its preset');
    }
    await served[1]?.stop();
    await serve({ ...step, code: withoutPreset ?? '' }, 'esm');
    const output = await runShell(preludeOf('esm') + rsc.code, ROOT, env);
    expect(output).toMatch(/^content-type: text\/html/im);
    expect(printsMatch(rsc.prints ?? '', output)).toBe(false);
  }, 120_000);
});

describe('the same steps in a CommonJS app (no "type"), with the CommonJS next.config.js', () => {
  let job: Served;
  beforeAll(async () => {
    await install('cjs');
    job = await serve(nextServe(), 'cjs');
  }, SETUP_TIMEOUT_MS);

  it("builds and starts: the adapter puts the page's tags on it", async () => {
    const page = await ask(`http://127.0.0.1:${ports.cjs}/isr`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-tag')?.split(',')).toContain('posts');
  });

  it("sends the app's revalidateTag to the service the page started", async () => {
    const route = `http://127.0.0.1:${ports.cjs}/api/revalidate?tag=posts`;
    expect((await ask(route, { method: 'POST' })).status).toBe(200);
    const accepted = await poll(
      () => job.output().includes('"message":"revalidation accepted"'),
      RETRY_ATTEMPTS,
      POLL_MS,
    );
    expect(accepted).toBe(true);
  });
});
