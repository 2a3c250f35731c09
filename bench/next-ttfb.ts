/**
 * Time to first byte of a streamed dynamic page (issue 34: the fixture's `/streaming`, whose
 * content waits on a gate while `loading.jsx` goes out first) through `npm start` (the local
 * CloudFront, the origin behind its RESPONSE_STREAM function URL, a streamed pass) against the
 * same `next start` asked directly, alternating, in the same run. Goal: from the second request
 * on, the service's median at most 1.2x the direct one plus 50 ms. The first request of the
 * URL renders once before its first byte (Next's own render count, printed by the page).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNextApp } from '../test/helpers/next-app.js';
import { npmStart, stopStarted } from '../test/local/npm-start.js';
import { median, round, table } from './stats.js';

export interface NextTtfbResult {
  readonly requests: number;
  /** ms to the first body byte, median and max, from the second request on. */
  readonly service: { readonly medianMs: number; readonly maxMs: number };
  readonly direct: { readonly medianMs: number; readonly maxMs: number };
  /** The service's first request: its time to first byte, and the renders Next made for it. */
  readonly first: { readonly ttfbMs: number; readonly renders: number };
  readonly ratio: number;
  /** service median <= 1.2 x direct median + 50 ms. */
  readonly withinGoal: boolean;
}

const renderCountOf = (html: string) => Number(/data-render-count="(\d+)"/.exec(html)?.[1]);

/** One GET: ms to its first body byte; the gate (if any) opened only then; the whole text. */
async function timed(url: string, openGate?: (id: string) => Promise<void>) {
  const gate = randomUUID();
  const started = performance.now();
  const response = await fetch(url, {
    headers: openGate === undefined ? {} : { 'x-fixture-gate': gate },
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  const ttfbMs = performance.now() - started;
  await openGate?.(gate);
  const decoder = new TextDecoder();
  let text = first.done ? '' : decoder.decode(first.value, { stream: true });
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    text += decoder.decode(chunk.value, { stream: true });
  return { ttfbMs, text, cache: response.headers.get('cache-status') ?? '' };
}

const stats = (values: readonly number[]) => ({
  medianMs: round(median(values)),
  maxMs: round(Math.max(...values)),
});

export async function nextTtfb(requests: number): Promise<NextTtfbResult> {
  const folder = mkdtempSync(join(tmpdir(), 'isr-bench-ttfb-'));
  const app = await startNextApp();
  try {
    const service = await npmStart({
      dataDir: join(folder, 'data'),
      env: { ISR_PRESET: 'nextjs', RENDER_ORIGIN_URL: app.url, POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });
    const openGate = async (id: string) => {
      await fetch(`${app.url}/api/gate?id=${id}`, { method: 'POST' });
    };
    const page = '/streaming';
    const before = renderCountOf((await timed(`${app.url}${page}`)).text);
    const first = await timed(`${service.url}${page}`);
    if (!first.cache.includes('fwd=bypass'))
      throw new Error(`${page} was not passed: ${first.cache}`);
    const viaService: number[] = [];
    const direct: number[] = [];
    for (let at = 0; at < requests; at += 1) {
      const passed = await timed(`${service.url}${page}`, openGate);
      if (!passed.cache.includes('hit-for-pass')) throw new Error(`not a pass: ${passed.cache}`);
      viaService.push(passed.ttfbMs);
      direct.push((await timed(`${app.url}${page}`, openGate)).ttfbMs);
    }
    const serviceStats = stats(viaService);
    const directStats = stats(direct);
    return {
      requests,
      service: serviceStats,
      direct: directStats,
      first: { ttfbMs: round(first.ttfbMs), renders: renderCountOf(first.text) - before },
      ratio: round(serviceStats.medianMs / directStats.medianMs),
      withinGoal: serviceStats.medianMs <= 1.2 * directStats.medianMs + 50,
    };
  } finally {
    await stopStarted(() => true);
    await app.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The table PERFORMANCE.md quotes. */
export function printNextTtfb(result: NextTtfbResult): void {
  console.log(
    `\nNext.js: time to first byte of a streamed dynamic page (/streaming, loading.jsx), ${result.requests} requests each from the second on; goal: service <= 1.2x direct + 50 ms`,
  );
  console.log(
    table([
      ['', 'median ms', 'max ms'],
      [
        'service (npm start: CloudFront, origin, streamed pass)',
        result.service.medianMs,
        result.service.maxMs,
      ],
      ['next start alone', result.direct.medianMs, result.direct.maxMs],
      ['ratio service / next start alone', result.ratio, ''],
      ['within the goal', String(result.withinGoal), ''],
      [
        `first request: ms to first byte (renders before it: ${result.first.renders})`,
        result.first.ttfbMs,
        '',
      ],
    ]),
  );
}
