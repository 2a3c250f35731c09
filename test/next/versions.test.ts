/**
 * The fixture app on the oldest and the newest supported Next.js (next/version.ts). The oldest
 * (`next-oldest`) is built with webpack in an app folder outside this repository, with
 * facetheory-isr/next as its cacheHandler by a relative path and the SigV4 packages installed
 * beside it, so its edge middleware bundles the adapter where the SDK could be reached; under
 * `next start` alone it answers the whole baseline. The newest is the fixture's own Turbopack
 * build (test/docs/nextjs-local-steps.test.ts builds one with the adapter). With the adapter,
 * each release puts Next's tags on pages, serves the prerendered pages of a
 * `dynamicParams = false` route (404 before 16.4), and sends revalidations.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bundleNextAdapter, NEXT_ADAPTER_EXTERNALS } from '../../next/build.js';
import { SUPPORTED_NEXT } from '../../next/version.js';
import { closeEndpoints, recordingEndpoint, type Received } from '../helpers/next-adapter.js';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { NEXT_BASELINE } from '../helpers/next-baseline.js';
import { ask } from '../helpers/next-http.js';
import {
  createOutsideApp,
  nextVersionOf,
  runAppNext,
  type NextRelease,
} from '../helpers/next-outside-app.js';
import { until } from '../local/npm-start.js';

/** A cold webpack build of the fixture takes ~40 s here; CI machines may be slower. */
const BUILD_TIMEOUT_MS = 400_000;
/**
 * The adapter in the oldest app, named by a relative path: `next build` reads one from the app's
 * folder, `next start` from its `.next` folder (next-server.js: formatDynamicImportPath(distDir,
 * cacheHandler)), so the same file takes two relative paths.
 */
const HANDLER_FILE = 'facetheory-isr-next.mjs';
const RELATIVE_AT_BUILD = `./${HANDLER_FILE}`;
const RELATIVE_AT_START = `../${HANDLER_FILE}`;

const folder = mkdtempSync(join(tmpdir(), 'isr-next-versions-'));
const oldestApp = join(folder, 'oldest');
const newestHandler = join(folder, 'facetheory-isr-next.mjs');

beforeAll(async () => {
  createOutsideApp(oldestApp, {
    release: 'oldest',
    packageJson: { type: 'module' },
    alsoInstalled: NEXT_ADAPTER_EXTERNALS,
  });
  await bundleNextAdapter(join(oldestApp, HANDLER_FILE));
  // The same input, so the same bundle: one esbuild run serves both releases.
  copyFileSync(join(oldestApp, HANDLER_FILE), newestHandler);
  await runAppNext(oldestApp, ['build', '--webpack'], { FIXTURE_CACHE_HANDLER: RELATIVE_AT_BUILD });
}, BUILD_TIMEOUT_MS);

afterAll(() => rmSync(folder, { recursive: true, force: true }));

it('the oldest is the oldest supported version, the newest of the same major', () => {
  expect(nextVersionOf('oldest')).toBe(SUPPORTED_NEXT.oldest);
  expect(Number(nextVersionOf('newest').split('.')[0])).toBe(SUPPORTED_NEXT.major);
});

describe(`Next.js ${nextVersionOf('oldest')} (the oldest supported) under next start alone`, () => {
  let app: NextApp;
  beforeAll(async () => {
    app = await startNextApp({ appDir: oldestApp });
  }, BUILD_TIMEOUT_MS);
  afterAll(() => app?.stop());

  // What viewers get; what next start adds besides is the newest's (next-start.test.ts): it
  // differs between releases (16.4.0 does not compress a route handler's JSON, so no Vary).
  it.each(NEXT_BASELINE.map((baseline) => [baseline.name, baseline] as const))(
    '%s',
    async (_name, baseline) => {
      expect((await baseline.viewer(app)).length).toBeGreaterThan(0);
    },
  );
});

const releases: [NextRelease, string][] = [
  ['oldest', nextVersionOf('oldest')],
  ['newest', nextVersionOf('newest')],
];

describe.each(releases)('facetheory-isr/next on the %s supported Next.js (%s)', (release) => {
  let app: NextApp;
  let received: Received[];
  beforeAll(async () => {
    const endpoint = await recordingEndpoint();
    received = endpoint.received;
    const env = {
      FIXTURE_CACHE_HANDLER: release === 'oldest' ? RELATIVE_AT_START : newestHandler,
      ISR_REVALIDATE_URL: `${endpoint.url}/_isr/revalidate`,
    };
    app = await startNextApp(release === 'oldest' ? { appDir: oldestApp, env } : { env });
  }, BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await app?.stop();
    await closeEndpoints();
  });

  it("puts Next's tags on a page, and the version check lets the app run", async () => {
    const page = await ask(`${app.url}/isr`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-tag')).toBe(
      'posts,post:hello,_N_T_/layout,_N_T_/isr/layout,_N_T_/isr/page,_N_T_/isr',
    );
    expect(app.output()).not.toMatch(/Next\.js version|UnsupportedNextVersionError/);
  });

  it('serves the prerendered pages of a dynamicParams = false route (a miss is not a 404)', async () => {
    const statuses = [];
    for (const path of ['/fixed/a', '/fixed/b', '/fixed/c']) {
      statuses.push((await ask(`${app.url}${path}`)).status);
    }
    expect(statuses).toEqual([200, 200, 404]);
  });

  it("sends the app's revalidateTag('posts', 'max') to the service", async () => {
    const answer = await ask(`${app.url}/api/revalidate?tag=posts`, { method: 'POST' });
    expect(answer.status).toBe(200);
    await until(
      () => received.length,
      (count) => count > 0,
    );
    expect(JSON.parse(received[0]?.body ?? '{}')).toEqual({
      tags: ['posts'],
      mode: 'stale',
      regenerate: true,
    });
  });

  it('runs the edge middleware (on the oldest, the adapter bundled in it)', async () => {
    const answer = await ask(`${app.url}/headers`);
    expect(answer.headers.get('x-fixture-middleware')).toBe('edge');
  });
});

describe('a relative cacheHandler path, as Next reads it (why NEXTJS.md gives an absolute one)', () => {
  it('next start reads the path next build read from the app folder from .next instead', async () => {
    const app = await startNextApp({
      appDir: oldestApp,
      env: { FIXTURE_CACHE_HANDLER: RELATIVE_AT_BUILD, ISR_REVALIDATE_URL: 'http://127.0.0.1:1/' },
    });
    try {
      expect((await ask(`${app.url}/isr`)).status).toBe(500);
      expect(app.output()).toContain(
        `Cannot find module '${join(oldestApp, '.next', HANDLER_FILE)}'`,
      );
    } finally {
      await app.stop();
    }
  });
});
