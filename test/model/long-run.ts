/**
 * `npm run model-check [-- [runs] [seed] [path] [--mutation=<guard removed>]]`: the model check at
 * length (10,000 runs by default) on its own local backends, with progress. The same property
 * `npm test` runs a bounded number of times; with a mutation it must fail, and says how soon.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { createAwsClients } from '../../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startLocalBackends } from '../../local/backends/index.js';
import { ensureBucket, ensureCacheTable } from '../../local/provision.js';
import { backgroundRace, targetedPlanArbitrary } from './plans.js';
import {
  conflictingRace,
  failedInProgressReads,
  passRace,
  retriedRevalidation,
  variantRace,
} from './races.js';
import { modelContext, planArbitrary, runPlan, tenantPlans, type Mutation } from './run.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

const flags = process.argv.slice(2).filter((arg) => arg.startsWith('--'));
const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
/** `--mutation=<name>` removes one guard: the check must then find a violation. */
const mutation = (flags.find((flag) => flag.startsWith('--mutation='))?.split('=')[1] ??
  'none') as Mutation;
/** `--plans=<name>`: one family of plans alone (a control's), `all` (the mix) by default. */
const families = {
  all: planArbitrary,
  targeted: targetedPlanArbitrary,
  background: backgroundRace,
  retried: retriedRevalidation,
  'failed-reads': failedInProgressReads,
  variants: variantRace,
  conflicts: conflictingRace,
  pass: passRace,
  tenants: tenantPlans,
} as const;
const family = (flags.find((flag) => flag.startsWith('--plans='))?.split('=')[1] ??
  'all') as keyof typeof families;
const plans = families[family];
if (plans === undefined) throw new Error(`--plans: one of ${Object.keys(families).join(', ')}`);
const runs = Number(args[0] ?? 10_000);
const seed = args[1] === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(args[1]);
/** fast-check's replay path of one failing case (printed with a failure), to rerun just that case. */
const path = args[2];
const directory = mkdtempSync(join(tmpdir(), 'isr-model-'));
const logDir = process.env.ISR_MODEL_LOG_DIR;
if (logDir !== undefined) mkdirSync(logDir, { recursive: true });
const backends = await startLocalBackends({ s3Directory: join(directory, 's3') });
const clients = createAwsClients({
  region: LOCAL_REGION,
  credentials: LOCAL_CREDENTIALS,
  endpoints: backends.endpoints,
});
await ensureCacheTable(clients.dynamodb, 'isr-model');
await ensureBucket(clients.s3, 'isr-model');
const context = modelContext(backends.endpoints, 'isr-model', 'isr-model');

console.log(
  `model check: ${runs} runs, seed ${seed}${family === 'all' ? '' : `, plans: ${family}`}${mutation === 'none' ? '' : `, guard removed: ${mutation}`}`,
);
const started = Date.now();
let done = 0;
/** Over every run's log digest, in order: two runs with one seed print the same one. */
const digest = createHash('sha256');
try {
  await fc.assert(
    fc.asyncProperty(plans, async (plan) => {
      const run = await runPlan(context, plan, mutation);
      digest.update(run.digest);
      // ISR_MODEL_LOG_DIR=<dir>: every run's normalised log, so two replays can be diffed run by run.
      if (logDir !== undefined) writeFileSync(join(logDir, `${done}.json`), run.log);
      done += 1;
      if (done % 100 === 0 || done === runs) {
        const perRun = (Date.now() - started) / done;
        const left = Math.round(((runs - done) * perRun) / 60_000);
        process.stdout.write(
          `\r  ${done}/${runs} runs, ${perRun.toFixed(0)} ms/run, ~${left} min left   `,
        );
      }
    }),
    { numRuns: runs, seed, endOnFailure: true, ...(path === undefined ? {} : { path }) },
  );
  console.log(
    `\nmodel check: ${runs} runs passed in ${((Date.now() - started) / 60_000).toFixed(1)} min (seed ${seed})`,
  );
  console.log(`digest of every run's event log: ${digest.digest('hex')}`);
} catch (error) {
  console.error(
    `\nmodel check FAILED after ${done} passing runs (seed ${seed}):\n${String(error)}`,
  );
  const cause = (error as { cause?: unknown }).cause;
  console.error(
    `cause: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`,
  );
  console.error(`replay: npm run model-check -- ${runs} ${seed} <path printed above>`);
  process.exitCode = 1;
} finally {
  clients.dynamodb.destroy();
  clients.s3.destroy();
  clients.sqs.destroy();
  await backends.stop();
  rmSync(directory, { recursive: true, force: true });
}
