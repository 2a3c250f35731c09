/**
 * From the app's `revalidateTag` to the first viewer answer with the new content (issue 22: goal
 * under 3 s locally). The fixture app runs under `next start` with `facetheory-isr/next` as its
 * cacheHandler, behind `npm start`; a viewer polls the page through the service. Baseline: the
 * same app under `next start` alone, with Next's own cache, polled directly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../local/backends/ports.js';
import { bundleNextAdapter } from '../next/build.js';
import { startNextApp } from '../test/helpers/next-app.js';
import { npmStart, stopStarted } from '../test/local/npm-start.js';
import { median, round } from './stats.js';

const POLL_MS = 20;
const GIVE_UP_MS = 60_000;

export interface NextRevalidateResult {
  readonly rounds: number;
  /** ms from the POST that calls revalidateTag to the first answer with a new render. */
  readonly service: { readonly stale: Timing; readonly expire: Timing };
  readonly nextAlone: { readonly stale: Timing; readonly expire: Timing };
  readonly ratioStale: number;
}

interface Timing {
  readonly medianMs: number;
  readonly maxMs: number;
  /** Answers with the old content seen before the new one, median. */
  readonly oldAnswers: number;
}

const stampOf = (html: string) => /data-render-id="([0-9a-f-]{36})"/.exec(html)?.[1];

async function stamp(url: string): Promise<string | undefined> {
  return stampOf(await (await fetch(url)).text());
}

/** One revalidation: POST to the app, then poll `page` until its render changes. */
async function oneRound(appUrl: string, page: string, query: string) {
  const old = await stamp(page);
  const start = performance.now();
  await fetch(`${appUrl}/api/revalidate?${query}`, { method: 'POST' });
  let oldAnswers = 0;
  while (performance.now() - start < GIVE_UP_MS) {
    if ((await stamp(page)) !== old) return { ms: performance.now() - start, oldAnswers };
    oldAnswers++;
    await sleep(POLL_MS);
  }
  throw new Error(`${page} never changed after ${query}`);
}

async function timings(appUrl: string, page: string, query: string, rounds: number) {
  const runs = [];
  for (let i = 0; i < rounds; i++) runs.push(await oneRound(appUrl, page, query));
  return {
    medianMs: round(median(runs.map((run) => run.ms))),
    maxMs: round(Math.max(...runs.map((run) => run.ms))),
    oldAnswers: median(runs.map((run) => run.oldAnswers)),
  };
}

/** Both setups measured in the same run, `rounds` revalidations each per mode. */
export async function nextRevalidate(rounds: number): Promise<NextRevalidateResult> {
  const folder = mkdtempSync(join(tmpdir(), 'isr-bench-next-'));
  const adapter = join(folder, 'index.mjs');
  await bundleNextAdapter(adapter);
  const port = await freePort();
  const app = await startNextApp({
    env: {
      FIXTURE_CACHE_HANDLER: adapter,
      ISR_REVALIDATE_URL: `http://127.0.0.1:${port}/_isr/revalidate`,
    },
  });
  const alone = await startNextApp();
  try {
    const service = await npmStart({
      port,
      dataDir: join(folder, 'data'),
      env: { RENDER_ORIGIN_URL: app.url, POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });
    const page = `${service.url}/isr`;
    await stamp(page); // the first render, then a HIT
    await stamp(`${alone.url}/isr`);
    const result = {
      service: {
        stale: await timings(app.url, page, 'tag=posts', rounds),
        expire: await timings(app.url, page, 'tag=posts&expire=1', rounds),
      },
      nextAlone: {
        stale: await timings(alone.url, `${alone.url}/isr`, 'tag=posts', rounds),
        expire: await timings(alone.url, `${alone.url}/isr`, 'tag=posts&expire=1', rounds),
      },
    };
    return {
      rounds,
      ...result,
      ratioStale: round(result.service.stale.medianMs / result.nextAlone.stale.medianMs),
    };
  } finally {
    await stopStarted(() => true);
    await Promise.all([app.stop(), alone.stop()]);
    rmSync(folder, { recursive: true, force: true });
  }
}
