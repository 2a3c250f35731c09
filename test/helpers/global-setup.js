// Jest loads global setup outside its module system, so this file is plain ESM and loads the
// TypeScript backends through tsx.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';
import buildSetup, { buildPackedTargets } from './build-setup.js';

/**
 * Starts the real local backends once per test run: DynamoDB Local, s3rver and local-aws-sqs.
 * Test files reach them through the endpoints exported here (workers inherit the environment).
 * A backend that cannot start fails the whole run, loudly. The prebuilt Lambda bundles are
 * built first when stale (test/package invokes them), and what `npm pack` ships besides.
 */
export default async function globalSetup() {
  await buildSetup();
  const { startLocalBackends } = await tsImport('../../local/backends/index.ts', import.meta.url);
  const directory = mkdtempSync(join(tmpdir(), 'isr-test-'));
  // The packed targets build while the backends start (mostly waiting on the JVM).
  const [started, packed] = await Promise.allSettled([
    startLocalBackends({ s3Directory: join(directory, 's3') }),
    buildPackedTargets(),
  ]);
  if (started.status === 'rejected') throw started.reason;
  const backends = started.value;
  if (packed.status === 'rejected') {
    // The build's own error fails the run, with no backend left running behind it.
    await backends.stop();
    throw packed.reason;
  }
  process.env.ISR_TEST_DYNAMODB_ENDPOINT = backends.endpoints.dynamodb;
  process.env.ISR_TEST_S3_ENDPOINT = backends.endpoints.s3;
  process.env.ISR_TEST_SQS_ENDPOINT = backends.endpoints.sqs;
  globalThis.__ISR_BACKENDS__ = { backends, directory };
}
