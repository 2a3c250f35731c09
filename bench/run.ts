/**
 * `npm run bench [-- --quick]`: every benchmark in one run against the local backends, each
 * reported as a ratio against its baseline measured in the same process. Prints a table and
 * writes bench/results/latest.json (and a dated copy).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { bundles } from './bundles.js';
import { startBackends } from './fixture.js';
import { hitPath } from './hit-path.js';
import { regeneration } from './regeneration.js';
import { storm, type StormResult } from './storm.js';
import { table } from './stats.js';
import { versions } from './versions.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const quick = process.argv.includes('--quick');
const settings = {
  stormSizes: quick ? [100] : [100, 1_000],
  hitIterations: quick ? 300 : 2_000,
  regenerationKeys: quick ? 100 : 1_000,
  regenerationConcurrency: 10,
  versionKeys: quick ? 20 : 200,
  initSamples: quick ? 5 : 21,
};

console.error(
  `benchmarks${quick ? ' (quick)' : ''}: starting DynamoDB Local, s3rver, local-aws-sqs`,
);
const backends = await startBackends();
try {
  const storms: StormResult[] = [];
  for (const size of settings.stormSizes) {
    storms.push(await storm(backends, size, 'isr'));
    storms.push(await storm(backends, size, 'baseline'));
  }
  const hit = await hitPath(backends, settings.hitIterations);
  const regen = await regeneration(
    backends,
    settings.regenerationKeys,
    settings.regenerationConcurrency,
  );
  const versionCost = await versions(backends, settings.versionKeys);
  const bundleResults = await bundles(settings.initSamples);

  const results = {
    date: new Date().toISOString(),
    machine: { node: process.version, cpu: cpus()[0]?.model, cores: cpus().length },
    settings,
    storm: storms,
    hitPath: hit,
    regeneration: regen,
    versions: versionCost,
    bundles: bundleResults,
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(
    `bench/results/bench-${results.date.replace(/[:.]/g, '-')}.json`,
    `${JSON.stringify(results, null, 2)}\n`,
  );

  const baselineOf = (result: StormResult) =>
    storms.find((other) => other.system === 'baseline' && other.requests === result.requests);
  console.log('\nStorm: concurrent requests on one stale key (baseline: no lease, no dedupe)');
  console.log(
    table([
      [
        'requests',
        'system',
        'served',
        'errors',
        'queue messages',
        'renders',
        'renders vs baseline',
      ],
      ...storms.map((result) => [
        result.requests,
        result.system,
        result.served,
        result.errors,
        result.queueMessages,
        result.renders,
        result.system === 'isr' ? `${result.renders} / ${baselineOf(result)?.renders ?? '?'}` : '',
      ]),
    ]),
  );
  console.log(
    `\nHit path: origin handler vs the bare GetItem + GetObject it makes (${hit.iterations} each, ${hit.pageBytes}-byte page)`,
  );
  console.log(
    table([
      ['', 'p50 ms', 'p99 ms'],
      ['origin handler (HIT)', hit.handler.p50, hit.handler.p99],
      ['bare GetItem + GetObject', hit.bare.p50, hit.bare.p99],
      ['ratio (target <= 1.2)', hit.ratioP50, hit.ratioP99],
    ]),
  );
  console.log(`\nRegeneration: ${regen.keys} stale keys, ${regen.concurrency} at a time`);
  console.log(
    table([
      ['', 'value'],
      [
        'calls per regeneration',
        Object.entries(regen.perRegeneration.calls)
          .map(([name, count]) => `${name} ${count}`)
          .join(', '),
      ],
      ['WCU per regeneration (AWS pricing)', regen.perRegeneration.pricedWcu],
      ['RCU per regeneration (AWS pricing)', regen.perRegeneration.pricedRcu],
      ['capacity reported by DynamoDB Local', regen.perRegeneration.localCapacity],
      ['worker regenerations/s', regen.isr.perSecond],
      ['same writes as bare SDK calls, /s', regen.bare.perSecond],
      ['time ratio worker / bare writes', regen.ratio],
      [
        'decisions',
        Object.entries(regen.decisions)
          .map(([name, count]) => `${name} ${count}`)
          .join(', '),
      ],
    ]),
  );
  console.log(
    `\nVersions: ${versionCost.keys} pages published ${versionCost.publishesPerKey} times each, ` +
      `keeping ${versionCost.keepVersions} (baseline: the same publishes as Recipe A, no VER# row)`,
  );
  const callsOf = (calls: Record<string, number>) =>
    Object.entries(calls)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ');
  console.log(
    table([
      ['per publish', 'Recipe B (shipped)', 'Recipe A (baseline)', 'ratio'],
      [
        'WCU (AWS pricing)',
        versionCost.recipeB.pricedWcu,
        versionCost.recipeA.pricedWcu,
        versionCost.wcuRatio,
      ],
      ['RCU (AWS pricing)', versionCost.recipeB.pricedRcu, versionCost.recipeA.pricedRcu, ''],
      [
        'time, all publishes (ms)',
        versionCost.recipeB.ms,
        versionCost.recipeA.ms,
        versionCost.timeRatio,
      ],
      ['calls', callsOf(versionCost.recipeB.calls), callsOf(versionCost.recipeA.calls), ''],
    ]),
  );
  console.log(
    '\nBundles (esbuild options of lib/isr-functions.ts; budget 650,000 bytes) and module init',
  );
  console.log(
    table([
      ['function', 'bytes', 'gzip bytes', 'init ms (median)', 'init vs baseline (<= 1.15)'],
      ...bundleResults.map((result) => [
        result.name,
        result.bytes,
        result.gzipBytes,
        result.initMs,
        result.initRatio,
      ]),
    ]),
  );
  console.log('\nresults: bench/results/latest.json');
} finally {
  await backends.stop();
}
