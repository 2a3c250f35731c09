/**
 * `npm run bench [-- --quick] [-- --only versions,hit]`: every benchmark (or the ones named) in
 * one run against the local backends, each reported as a ratio against its baseline measured in
 * the same process. Prints a table per benchmark and writes bench/results/latest.json (a full
 * run) or bench/results/partial-<date>.json (`--only`), and a dated copy.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { bundles } from './bundles.js';
import { crawlerSweep, printCost, regenerationKinds } from './cost.js';
import { flood, type FloodResult } from './flood.js';
import { edgeWorkload, printEdge } from './edge.js';
import { startBackends } from './fixture.js';
import { hitPath } from './hit-path.js';
import { nextRevalidate, type NextRevalidateResult } from './next-revalidate.js';
import { nextTtfb, printNextTtfb, type NextTtfbResult } from './next-ttfb.js';
import { regeneration, regenerationTable } from './regeneration.js';
import { printRevalidation, tagRevalidation } from './revalidation.js';
import { storm, type StormResult } from './storm.js';
import { table } from './stats.js';
import { printTraffic, traffic } from './traffic.js';
import { printVariants, variants } from './variants.js';
import { versions } from './versions.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const quick = process.argv.includes('--quick');
const onlyArg = process.argv.find(
  (arg, i, all) => all[i - 1] === '--only' || arg.startsWith('--only='),
);
const only = onlyArg
  ?.replace(/^--only=/, '')
  .split(',')
  .filter(Boolean);
const settings = {
  stormSizes: quick ? [100] : [100, 1_000],
  hitIterations: quick ? 300 : 2_000,
  regenerationKeys: quick ? 100 : 1_000,
  regenerationConcurrency: 10,
  versionKeys: quick ? 20 : 200,
  floodPaths: quick ? 500 : 5_000,
  revalidationPages: quick ? [1_000, 5_000] : [10_000, 100_000],
  floodConcurrency: 100,
  initSamples: quick ? 5 : 21,
  nextRevalidateRounds: quick ? 3 : 10,
  nextTtfbRequests: quick ? 10 : 40,
  trafficIterations: quick ? 200 : 1_000,
  variantIterations: quick ? 300 : 2_000,
  costKeys: quick ? 50 : 200,
  crawlerPages: quick ? 1_000 : 10_000,
  edgePages: quick ? 200 : 2_000,
  edgeViews: quick ? 2_000 : 20_000,
};

/** One benchmark: runs, then prints its table from what it returned. */
interface Section<T> {
  readonly name: string;
  run(): Promise<T>;
  print(result: T): void;
}
const section = <T>(s: Section<T>): Section<unknown> => s;

console.error(
  `benchmarks${quick ? ' (quick)' : ''}: starting DynamoDB Local, s3rver, local-aws-sqs`,
);
const backends = await startBackends();
try {
  const sections = [
    section({
      name: 'storm',
      run: async () => {
        const storms: StormResult[] = [];
        for (const size of settings.stormSizes) {
          storms.push(await storm(backends, size, 'isr'));
          storms.push(await storm(backends, size, 'baseline'));
        }
        return storms;
      },
      print: (storms: StormResult[]) => {
        const baselineOf = (result: StormResult) =>
          storms.find((other) => other.system === 'baseline' && other.requests === result.requests);
        console.log(
          '\nStorm: concurrent requests on one stale key (baseline: no lease, no dedupe)',
        );
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
              result.system === 'isr'
                ? `${result.renders} / ${baselineOf(result)?.renders ?? '?'}`
                : '',
            ]),
          ]),
        );
      },
    }),
    section({
      name: 'hit',
      run: () => hitPath(backends, settings.hitIterations),
      print: (hit: Awaited<ReturnType<typeof hitPath>>) => {
        console.log(
          `\nHit path: origin handler vs the bare GetItem + GetObject it makes (${hit.iterations} each, ${hit.pageBytes}-byte page)`,
        );
        console.log(
          table([
            ['', 'p50 ms', 'p99 ms'],
            ['origin handler (HIT)', hit.handler.p50, hit.handler.p99],
            ['bare GetItem + GetObject', hit.bare.p50, hit.bare.p99],
            ['ratio (target <= 1.2)', hit.ratioP50, hit.ratioP99],
            ['bare pair + tag-state read (design not chosen)', hit.tagRead.p50, hit.tagRead.p99],
            ['its ratio to the bare pair', hit.tagReadRatioP50, hit.tagReadRatioP99],
            [
              'bare pair + in-progress shard, reused 250 ms',
              hit.inProgress.p50,
              hit.inProgress.p99,
            ],
            ['its ratio to the bare pair (<= 1.1)', hit.inProgressRatioP50, hit.inProgressRatioP99],
            ['  the same read on every request', hit.inProgressEvery.p50, hit.inProgressEvery.p99],
            ['  its ratio', hit.inProgressEveryRatioP50, hit.inProgressEveryRatioP99],
          ]),
        );
      },
    }),
    section({
      name: 'regeneration',
      // One at a time: the service's latency overhead; 10 at a time: throughput on a shared CPU.
      run: async () => [
        await regeneration(backends, settings.regenerationKeys / 10, 1),
        await regeneration(backends, settings.regenerationKeys, settings.regenerationConcurrency),
      ],
      print: (runs: Awaited<ReturnType<typeof regeneration>>[]) => {
        for (const regen of runs) {
          console.log(`\nRegeneration: ${regen.keys} stale keys, ${regen.concurrency} at a time`);
          console.log(regenerationTable(regen));
        }
      },
    }),
    section({
      name: 'cost',
      run: async () => ({
        kinds: await regenerationKinds(backends, settings.costKeys),
        sweep: await crawlerSweep(
          backends,
          settings.crawlerPages,
          settings.regenerationConcurrency,
        ),
      }),
      print: printCost,
    }),
    section({
      name: 'edge',
      run: () => edgeWorkload(backends, { pages: settings.edgePages, views: settings.edgeViews }),
      print: printEdge,
    }),
    section({
      name: 'versions',
      run: () => versions(backends, settings.versionKeys),
      print: (versionCost: Awaited<ReturnType<typeof versions>>) => {
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
      },
    }),
    section({
      name: 'revalidation',
      run: () => tagRevalidation(backends, settings.revalidationPages),
      print: printRevalidation,
    }),
    section({
      name: 'flood',
      run: async () => {
        const results: FloodResult[] = [];
        for (const configuration of ['no-bounds', 'defaults', 'allow-list'] as const) {
          results.push(
            await flood(backends, configuration, settings.floodPaths, settings.floodConcurrency),
          );
        }
        return results;
      },
      print: (results: FloodResult[]) => {
        const first = results[0];
        console.log(
          `\nFlood: ${first?.paths} distinct random paths (the upstream answers 404 after ${50} ms), ` +
            `${first?.concurrency} at a time, while a visitor reads 10 published pages ` +
            '(baseline: no bounds; visitor ratios against the same visitor with no flood)',
        );
        const kinds = (rows: Record<string, number>) =>
          Object.entries(rows)
            .map(([kind, count]) => `${kind} ${count}`)
            .join(', ');
        console.log(
          table([
            ['', ...results.map((result) => result.configuration)],
            ['flood answered', ...results.map((r) => kinds(r.floodStatuses))],
            ['flood duration (ms)', ...results.map((r) => r.floodMs)],
            ['renders', ...results.map((r) => r.renders)],
            ['most renders at once', ...results.map((r) => r.peakConcurrentRenders)],
            ['rows after', ...results.map((r) => kinds(r.rows))],
            ['bodies stored (bytes)', ...results.map((r) => `${r.bodies} (${r.bytesStored})`)],
            [
              'visitor requests (non-200)',
              ...results.map((r) => `${r.visitor.requests} (${r.visitor.non200})`),
            ],
            [
              'visitor p50 ms (x quiet)',
              ...results.map((r) => `${r.visitor.p50} (${r.visitor.p50Ratio}x)`),
            ],
            [
              'visitor p99 ms (x quiet)',
              ...results.map((r) => `${r.visitor.p99} (${r.visitor.p99Ratio}x)`),
            ],
          ]),
        );
      },
    }),
    section({
      name: 'bundles',
      run: () => bundles(settings.initSamples),
      print: (bundleResults: Awaited<ReturnType<typeof bundles>>) => {
        console.log(
          '\nBundles (the prebuilt dist/functions; budget 700,000 bytes, as test/lib/isr-functions.bundle.test.ts) and module init',
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
      },
    }),
    section({
      name: 'next',
      run: async () => ({
        ...(await nextRevalidate(settings.nextRevalidateRounds)),
        ttfb: await nextTtfb(settings.nextTtfbRequests),
      }),
      print: (next: NextRevalidateResult & { ttfb: NextTtfbResult }) => {
        console.log(
          `\nNext.js: the app's revalidateTag to the first viewer answer with the new page (${next.rounds} each; goal < 3 s)`,
        );
        const row = (what: string, timing: NextRevalidateResult['service']['stale']) => [
          what,
          timing.medianMs,
          timing.maxMs,
          timing.oldAnswers,
        ];
        console.log(
          table([
            ['', 'median ms', 'max ms', 'old answers before (median)'],
            row(
              "service + adapter, revalidateTag(t, 'max') (stale, regenerate)",
              next.service.stale,
            ),
            row('service + adapter, { expire: 0 } (expire)', next.service.expire),
            row("next start alone, revalidateTag(t, 'max')", next.nextAlone.stale),
            row('next start alone, { expire: 0 }', next.nextAlone.expire),
            ['ratio service / next start alone (stale)', next.ratioStale, '', ''],
          ]),
        );
        printNextTtfb(next.ttfb);
      },
    }),
    section({
      name: 'traffic',
      run: () => traffic(backends, settings.trafficIterations),
      print: printTraffic,
    }),
    section({
      name: 'variants',
      run: () => variants(backends, settings.variantIterations),
      print: printVariants,
    }),
  ];
  const unknown = (only ?? []).filter((name) => !sections.some((s) => s.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `unknown benchmark ${unknown.join(', ')}; known: ${sections.map((s) => s.name).join(', ')}`,
    );
  }
  const chosen = sections.filter((s) => only === undefined || only.includes(s.name));
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: { node: process.version, cpu: cpus()[0]?.model, cores: cpus().length },
    settings,
  };
  // Each table is printed as soon as its benchmark ends, and a benchmark that fails is recorded
  // and reported while the others still run: an hour-long run never loses what it measured.
  const failed: string[] = [];
  for (const s of chosen) {
    try {
      results[s.name] = await s.run();
      s.print(results[s.name]);
    } catch (error) {
      failed.push(s.name);
      results[s.name] = { failed: error instanceof Error ? error.message : String(error) };
      console.error(`\nbenchmark ${s.name} failed:`, error);
    }
  }
  mkdirSync('bench/results', { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}\n`;
  const stamp = String(results.date).replace(/[:.]/g, '-');
  writeFileSync(
    only === undefined ? 'bench/results/latest.json' : `bench/results/partial-${stamp}.json`,
    json,
  );
  writeFileSync(`bench/results/bench-${stamp}.json`, json);
  console.log(
    only === undefined
      ? '\nresults: bench/results/latest.json'
      : `\nresults: bench/results/partial-${stamp}.json`,
  );
  if (failed.length > 0) {
    console.error(`failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
} finally {
  await backends.stop();
}
