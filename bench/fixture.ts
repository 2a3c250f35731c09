/** One set of local backends for the whole benchmark run, and per-scenario resources on it. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ModuleRenderer, htmlPage } from '../lambda/adapters/renderer/module.js';
import type { CacheKey, CacheMeta } from '../lambda/core/page/model.js';
import { bodyKeyOf } from '../lambda/core/page/rows.js';
import { createAwsClients, type AwsClients } from '../lambda/shared/aws-clients.js';
import { loadOriginConfig, loadWorkerConfig } from '../lambda/shared/config.js';
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startLocalBackends,
  type LocalBackends,
} from '../local/backends/index.js';
import { functionUrlEvent } from '../local/function-url.js';
import {
  ensureBucket,
  ensureCacheTable,
  ensureRegenerationQueues,
  type RegenerationQueues,
} from '../local/provision.js';
import { TestClock } from '../test/helpers/clock.js';

export interface Backends {
  readonly backends: LocalBackends;
  clients(): AwsClients;
  stop(): Promise<void>;
}

export async function startBackends(): Promise<Backends> {
  const directory = mkdtempSync(join(tmpdir(), 'isr-bench-'));
  const backends = await startLocalBackends({ s3Directory: join(directory, 's3') });
  return {
    backends,
    clients: () =>
      createAwsClients({
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
        endpoints: backends.endpoints,
      }),
    stop: async () => {
      await backends.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export interface Scenario {
  readonly clients: AwsClients;
  readonly tableName: string;
  readonly bucket: string;
  readonly queues: RegenerationQueues;
  readonly clock: TestClock;
  readonly renders: { count: number };
  readonly renderer: ModuleRenderer;
  readonly env: Record<string, string>;
  readonly originConfig: ReturnType<typeof loadOriginConfig>;
  readonly workerConfig: ReturnType<typeof loadWorkerConfig>;
  destroy(): void;
}

/** A fresh table, bucket and FIFO queue pair, a frozen clock and a counting renderer. */
export async function scenario(
  backends: Backends,
  options: { pageBytes?: number } = {},
): Promise<Scenario> {
  const clients = backends.clients();
  const name = `bench-${randomUUID().slice(0, 8)}`;
  await ensureCacheTable(clients.dynamodb, name);
  await ensureBucket(clients.s3, name);
  const queues = await ensureRegenerationQueues(clients.sqs, {
    name,
    visibilityTimeoutSeconds: 60,
    maxReceiveCount: 10,
  });
  const renders = { count: 0 };
  const filler = 'x'.repeat(Math.max(0, (options.pageBytes ?? 2_048) - 64));
  const renderer = new ModuleRenderer((request) => {
    renders.count += 1;
    return htmlPage(`<html><body><h1>${request.cacheKey.key}</h1><p>${filler}</p></body></html>`);
  });
  const env = {
    FACETHEORY_CACHE_TABLE_NAME: name,
    ISR_BODY_BUCKET: name,
    ISR_QUEUE_URL: queues.queueUrl,
    ISR_DLQ_URL: queues.dlqUrl,
    ISR_REVALIDATE_SECONDS: '60',
    ISR_DEPLOY_ID: 'bench',
  };
  return {
    clients,
    tableName: name,
    bucket: name,
    queues,
    clock: new TestClock(),
    renders,
    renderer,
    env,
    originConfig: loadOriginConfig(env),
    workerConfig: loadWorkerConfig(env),
    destroy: () => {
      clients.dynamodb.destroy();
      clients.s3.destroy();
      clients.sqs.destroy();
    },
  };
}

/** Renders a page and writes its body under a new key with a bare PutObject: META to publish. */
export async function renderAndStoreBare(s: Scenario, cacheKey: CacheKey): Promise<CacheMeta> {
  const page = await s.renderer.render({ cacheKey, signal: new AbortController().signal });
  const s3Key = bodyKeyOf(cacheKey, randomUUID());
  const { ETag } = await s.clients.s3.send(
    new PutObjectCommand({
      Bucket: s.bucket,
      Key: s3Key,
      Body: page.body,
      ContentType: page.contentType,
    }),
  );
  return {
    pk: cacheKey.pk,
    s3Key,
    etag: ETag,
    generatedAt: s.clock.seconds,
    revalidateSeconds: 60,
    contentType: page.contentType,
    statusCode: page.status,
  };
}

export const getEvent = (path: string): LambdaFunctionURLEvent =>
  functionUrlEvent({
    method: 'GET',
    target: path,
    headers: { host: 'bench.lambda-url.localhost' },
  });
