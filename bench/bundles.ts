/**
 * Bundle size and module init time of each Lambda, built with the CDK construct's own esbuild
 * options (lib/isr-functions.ts), against a function that only creates the three SDK clients.
 * Init time is the time to import the bundle in a fresh Node process (median of several), on
 * this machine's Node.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { BUNDLING } from '../lib/isr-functions.js';
import { median, progress, round } from './stats.js';

export interface BundleResult {
  readonly name: string;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly initMs: number;
  /** Module init against the SDK-only baseline, measured in the same run (target: <= 1.15). */
  readonly initRatio: number;
}

const BASELINE = 'sdk clients only (baseline)';
const ENTRIES = {
  origin: 'lambda/origin/index.ts',
  worker: 'lambda/worker/index.ts',
  'sdk clients only (baseline)': 'bench/sdk-only-entry.ts',
} as const;

/** Dummy configuration: enough for the handlers to pass validation at import. */
const ENV = {
  AWS_REGION: 'us-east-1',
  FACETHEORY_CACHE_TABLE_NAME: 'bench-table',
  ISR_BODY_BUCKET: 'bench-bucket',
  ISR_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo',
  ISR_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/d.fifo',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

export async function bundles(samples: number): Promise<BundleResult[]> {
  const directory = mkdtempSync(join(tmpdir(), 'isr-bundles-'));
  try {
    const built: { name: string; outfile: string }[] = [];
    for (const [name, entry] of Object.entries(ENTRIES)) {
      const outfile = join(directory, name.split(' ')[0] ?? name, 'index.mjs');
      await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: BUNDLING.target ?? 'node22',
        minify: BUNDLING.minify ?? true,
        keepNames: BUNDLING.keepNames ?? false,
        sourcemap: BUNDLING.sourceMap === true ? 'external' : false,
        sourcesContent: BUNDLING.sourcesContent ?? false,
        mainFields: BUNDLING.mainFields ?? ['module', 'main'],
        banner: { js: BUNDLING.banner ?? '' },
        legalComments:
          BUNDLING.esbuildArgs?.['--legal-comments'] === 'external' ? 'external' : 'eof',
        logLevel: 'silent',
      });
      built.push({ name, outfile });
    }
    // Samples are interleaved (origin, worker, baseline, origin...), so a slow moment of the
    // machine weighs on every bundle alike and the ratios hold.
    const times = new Map(built.map(({ name }) => [name, [] as number[]]));
    for (let i = 0; i < samples; i++) {
      for (const { name, outfile } of built) times.get(name)?.push(importTime(outfile));
      progress('module init time', i + 1, samples);
    }
    const baseline = median(times.get(BASELINE) ?? []);
    return built.map(({ name, outfile }) => {
      const initMs = median(times.get(name) ?? []);
      return {
        name,
        bytes: statSync(outfile).size,
        gzipBytes: gzipSync(readFileSync(outfile)).length,
        initMs: round(initMs, 1),
        initRatio: round(initMs / baseline, 2),
      };
    });
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Milliseconds a fresh Node process takes to import (evaluate) the bundle. */
function importTime(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, ...ENV },
    encoding: 'utf8',
  });
  return Number(output);
}
