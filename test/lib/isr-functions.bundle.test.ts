import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { logicalIdOf, resourceOf, synthIsrStack } from './stack-fixture.js';

/** The environment a deployed function gets, with the CloudFormation references filled in. */
const deployedEnv = {
  FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
  ISR_BODY_BUCKET: 'isr-bodies',
  ISR_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr.fifo',
  ISR_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-dlq.fifo',
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/**
 * Largest minified bundle of a function on the viewer's path (issue: lean cold start): the
 * origin answers viewers, the worker keeps their pages fresh.
 */
const BUNDLE_BUDGET_BYTES = 650_000;
/**
 * The revalidate function and the sweeper also carry the CloudFront client (about 150 KB) to
 * purge by cache tag. Neither is on a viewer's path (a CMS webhook, a 5-minute schedule), so
 * their cold start buys the purge; they are held to their own budget.
 */
const PURGING_BUNDLE_BUDGET_BYTES = 800_000;

describe('Lambda bundling', () => {
  // One real esbuild run (the other CDK tests skip bundling); local esbuild, never Docker.
  const outdir = mkdtempSync(join(tmpdir(), 'isr-bundle-'));
  const { template, service } = synthIsrStack({ bundle: true, outdir });
  const bundleOf = (fn: typeof service.originFunction) => {
    const resource = resourceOf<{ Code: { S3Key: string } }>(template, logicalIdOf(fn));
    // Asset directories are named after the asset hash, which is also the S3 key.
    const hash = resource.Properties.Code.S3Key.replace(/\.zip$/, '');
    return join(outdir, `asset.${hash}`, 'index.mjs');
  };

  it.each([
    ['origin', () => service.originFunction],
    ['worker', () => service.workerFunction],
    ['sweeper', () => service.sweeperFunction],
    ['revalidate', () => service.revalidateFunction],
  ])('builds the %s as one minified ESM file with a source map', (_name, fn) => {
    const bundle = bundleOf(fn());
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
    ['origin', () => service.originFunction, BUNDLE_BUDGET_BYTES],
    ['worker', () => service.workerFunction, BUNDLE_BUDGET_BYTES],
    ['sweeper', () => service.sweeperFunction, PURGING_BUNDLE_BUDGET_BYTES],
    ['revalidate', () => service.revalidateFunction, PURGING_BUNDLE_BUDGET_BYTES],
  ])('keeps the %s bundle within its budget', (_name, fn, budget) => {
    expect(statSync(bundleOf(fn())).size).toBeLessThanOrEqual(budget);
  });

  it.each([
    ['origin', () => service.originFunction],
    ['worker', () => service.workerFunction],
    ['sweeper', () => service.sweeperFunction],
    ['revalidate', () => service.revalidateFunction],
  ])('loads the %s bundle under plain node and exports handler', (_name, fn) => {
    const script = `import(${JSON.stringify(pathToFileURL(bundleOf(fn())).href)})
      .then((module) => console.log(typeof module.handler))`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, ...deployedEnv },
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('function');
  });
});
