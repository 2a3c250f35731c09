/**
 * Bundle size and module init time of the Lambdas the construct deploys: the prebuilt bundles
 * in `dist/functions` (built first when stale), against a function that only creates the three
 * SDK clients, built with the same esbuild options (scripts/bundle-options.ts). Init time is the
 * time to import the bundle in a fresh Node process (median of several), on this machine's Node.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildTargets, functionBundleDir, ROOT } from '../scripts/build-targets.js';
import { BUNDLE_FILE, LAMBDA_BUNDLE } from '../scripts/bundle-options.js';
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
/** The deployed bundles measured, by name. */
const DEPLOYED = ['origin', 'worker'] as const;

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
  await buildTargets(['functions']);
  const directory = mkdtempSync(join(tmpdir(), 'isr-bundles-'));
  try {
    const baseline = join(directory, 'baseline', BUNDLE_FILE);
    await build({
      ...LAMBDA_BUNDLE,
      absWorkingDir: ROOT,
      entryPoints: ['bench/sdk-only-entry.ts'],
      outfile: baseline,
    });
    const built = [
      ...DEPLOYED.map((name) => ({
        name,
        outfile: join(ROOT, functionBundleDir(name), BUNDLE_FILE),
      })),
      { name: BASELINE, outfile: baseline },
    ];
    // Samples are interleaved (origin, worker, baseline, origin...), so a slow moment of the
    // machine weighs on every bundle alike and the ratios hold.
    const times = new Map(built.map(({ name }) => [name, [] as number[]]));
    for (let i = 0; i < samples; i++) {
      for (const { name, outfile } of built) times.get(name)?.push(importTime(outfile));
      progress('module init time', i + 1, samples);
    }
    const baselineMs = median(times.get(BASELINE) ?? []);
    return built.map(({ name, outfile }) => {
      const initMs = median(times.get(name) ?? []);
      return {
        name,
        bytes: statSync(outfile).size,
        gzipBytes: gzipSync(readFileSync(outfile)).length,
        initMs: round(initMs, 1),
        initRatio: round(initMs / baselineMs, 2),
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
