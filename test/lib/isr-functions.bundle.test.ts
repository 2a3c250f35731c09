import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { functionBundleDirectory } from '../../lib/isr-function-code.js';
import { logicalIdOf, resourceOf, synthIsrStack } from './stack-fixture.js';

/** The environment a deployed function gets, with the CloudFormation references filled in. */
const deployedEnv = {
  FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
  ISR_BODY_BUCKET: 'isr-bodies',
  ISR_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr.fifo',
  ISR_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-dlq.fifo',
  ISR_PURGE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-purge',
  ISR_PURGE_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-purge-dlq',
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/**
 * Largest minified bundle of a function on the viewer's path (issue: lean cold start): the
 * origin answers viewers, the worker keeps their pages fresh. About 90% of each is the AWS SDK
 * and Powertools; our own code is about 80 KB (the settings table, read by every function so
 * synth and cold start agree, is 11 KB of it; the worker also carries the background marking of
 * a tag, issue 23). The budget leaves room for features, not for an accidental dependency: the
 * CloudFront client alone is about 150 KB.
 */
const BUNDLE_BUDGET_BYTES = 700_000;
/**
 * The revalidate function and the sweeper also carry the CloudFront client (about 150 KB) to
 * purge by cache tag. Neither is on a viewer's path (a CMS webhook, a 5-minute schedule), so
 * their cold start buys the purge; they are held to their own budget. Raised from 800,000 when
 * the revalidate function gained the dry run, the all-or-nothing fan-out start and its conflict
 * retries (issues 33, 36): 802,024 bytes measured, the sweeper 755,395 with its lease.
 */
const PURGING_BUNDLE_BUDGET_BYTES = 820_000;
/**
 * The purger carries the CloudFront client too, but no S3 client (about 100 KB) and not the
 * idempotency engine (about 35 KB with its JMESPath): measured 590 KB. The budget catches either
 * coming in by accident.
 */
const PURGER_BUNDLE_BUDGET_BYTES = 620_000;

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
/** Each file of a directory with its content hash. */
const contentsOf = (directory: string) =>
  Object.fromEntries(readdirSync(directory).map((name) => [name, sha256(join(directory, name))]));

describe('Lambda bundles (prebuilt into dist/functions by npm run build)', () => {
  // The synth `cdk synth` runs: assets staged into the assembly, as they are uploaded.
  const outdir = mkdtempSync(join(tmpdir(), 'isr-bundle-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));
  const { template, service } = synthIsrStack({ outdir });
  const functions = {
    origin: service.originFunction,
    worker: service.workerFunction,
    sweeper: service.sweeperFunction,
    revalidate: service.revalidateFunction,
    purger: service.purgerFunction,
  };
  const kinds = Object.keys(functions) as (keyof typeof functions)[];
  const bundleOf = (kind: keyof typeof functions) =>
    join(functionBundleDirectory(kind), 'index.mjs');

  it.each(kinds)('deploys the prebuilt %s bundle, byte for byte', (kind) => {
    const resource = resourceOf<{ Code: { S3Key: string }; Handler: string }>(
      template,
      logicalIdOf(functions[kind]),
    );
    // Asset directories are named after the asset hash, which is also the S3 key.
    const hash = resource.Properties.Code.S3Key.replace(/\.zip$/, '');
    const staged = contentsOf(join(outdir, `asset.${hash}`));
    expect(staged).toEqual(contentsOf(functionBundleDirectory(kind)));
    expect(Object.keys(staged).sort()).toEqual([
      'index.mjs',
      'index.mjs.LEGAL.txt',
      'index.mjs.map',
    ]);
    expect(resource.Properties.Handler).toBe('index.handler');
  });

  it.each(kinds)('builds the %s as one minified ESM file with a source map', (kind) => {
    const bundle = bundleOf(kind);
    const code = readFileSync(bundle, 'utf8');
    expect(code.startsWith("import { createRequire } from 'module';")).toBe(true);
    expect(code).toMatch(/\/\/# sourceMappingURL=index\.mjs\.map\s*$/);
    expect(statSync(`${bundle}.map`).size).toBeGreaterThan(0);
    // The SDK is bundled, not taken from the runtime.
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//);
  });

  // Size is deterministic, so the budget is a test (time is a benchmark: `npm run bench`).
  // The three SDK clients alone are about 497 KB; this leaves the service about 150 KB.
  it.each([
    ['origin', BUNDLE_BUDGET_BYTES],
    ['worker', BUNDLE_BUDGET_BYTES],
    ['sweeper', PURGING_BUNDLE_BUDGET_BYTES],
    ['revalidate', PURGING_BUNDLE_BUDGET_BYTES],
    ['purger', PURGER_BUNDLE_BUDGET_BYTES],
  ] as const)('keeps the %s bundle within its budget', (kind, budget) => {
    expect(statSync(bundleOf(kind)).size).toBeLessThanOrEqual(budget);
  });

  it.each(kinds)('loads the %s bundle under plain node and exports handler', (kind) => {
    // With the `awslambda` global the Node.js runtime sets before loading a handler's module
    // (aws-lambda-nodejs-runtime-interface-client, src/index.mjs); only the origin streams.
    const mark = `Symbol.for('aws.lambda.runtime.handler.streaming')`;
    const script = `globalThis.awslambda = { streamifyResponse: (h) => { h[${mark}] = 'response'; return h; } };
      import(${JSON.stringify(pathToFileURL(bundleOf(kind)).href)})
      .then((module) => console.log(typeof module.handler, module.handler[${mark}] ?? 'buffered'))`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, ...deployedEnv },
      encoding: 'utf8',
    });
    expect(out.trim()).toBe(kind === 'origin' ? 'function response' : 'function buffered');
  });
});
