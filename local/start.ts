/**
 * `npm start`: the whole service on one machine, in one process tree. DynamoDB Local (data kept
 * under .local/ so a restart keeps the cache), s3rver on a folder, local-aws-sqs with the FIFO
 * queue and its DLQ and the purge queue and its DLQ, the origin handler behind an HTTP server
 * that plays CloudFront, and pollers that feed SQS batches to the worker handler and to the
 * purger's (which prints each purge). Everything listens on 127.0.0.1; set
 * ISR_LOCAL_BIND_ADDRESS (e.g. 0.0.0.0) to open the HTTP server to the LAN.
 */
import { join, resolve } from 'node:path';
import {
  loadLocalConfig,
  loadOriginConfig,
  loadPurgerConfig,
  loadRevalidateConfig,
  loadWorkerConfig,
  loadSettings,
  localDefaults,
} from '../lambda/shared/config.js';
import { createAwsClients } from '../lambda/shared/aws-clients.js';
import { buildStreamingOriginHandler } from '../lambda/origin/build.js';
import { buildPurgerHandler } from '../lambda/purger/build.js';
import { buildRevalidateHandler } from '../lambda/revalidate/build.js';
import { buildWorkerHandler } from '../lambda/worker/build.js';
import {
  assertJava,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startLocalBackends,
} from './backends/index.js';
import { assertPortFree } from './backends/ports.js';
import { LocalCdnInvalidator } from '../lambda/adapters/cdn-invalidator/local.js';
import { lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { removeEndpointsFile, writeEndpointsFile } from './endpoints-file.js';
import { EDGE_CACHE_DIRECTORY } from './cloudfront/synth.js';
import { localCloudFront } from './edge.js';
import { installLambdaStreaming } from './lambda-streaming.js';
import { REVALIDATE_PATH, startHttpFront } from './http-front.js';
import { npmLaunchers, watchLaunchers } from './launchers.js';
import {
  ensureBucket,
  ensureCacheTable,
  ensurePurgeQueues,
  ensureRegenerationQueues,
} from './provision.js';
import { readyLines } from './ready-lines.js';
import { localRevalidation } from './revalidate-route.js';
import { createShutdown } from './shutdown.js';
import { WorkerPoller } from './worker-poller.js';
import { startDeferredCatchUp } from './deferred-intents.js';

const WORKER_TIMEOUT_MS = 60_000;
const PURGER_TIMEOUT_MS = 60_000;
/**
 * Purges the local purger takes at once. The poller receives one message at a time
 * (local-aws-sqs long-polls badly with more) and does not wait to fill a batch: locally, purges
 * come a few at a time.
 */
const PURGER_BATCH_SIZE = 100;
const ORIGIN_TIMEOUT_MS = 30_000;

/** Local defaults (the settings table's `local` values); anything set in the environment wins. */
function localEnvironment(): Record<string, string | undefined> {
  return {
    ...localDefaults(process.env),
    POWERTOOLS_LOG_LEVEL: 'INFO',
    // EMF metric blobs are for CloudWatch; locally the decision log lines say the same.
    POWERTOOLS_METRICS_DISABLED: 'true',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...process.env,
  };
}

async function main(): Promise<void> {
  const env = localEnvironment();
  Object.assign(process.env, env); // Powertools reads its settings from the environment
  const local = loadLocalConfig(env);
  const dataDir = resolve(local.dataDir);
  // First: a second start on this directory must fail before it touches anything in it.
  const lock = await lockDataDir(dataDir, { host: local.host, port: local.port });
  if (lock.tookOver !== undefined) {
    const { pid, since } = lock.tookOver;
    console.log(`took over ${dataDir} from npm start pid ${pid} (since ${since}), which is gone`);
  }
  await serve(env, local, dataDir, lock).catch(async (error: unknown) => {
    await lock.release();
    throw error;
  });
}

/** Everything after the lock: the backends, the functions, the front, the ordered stop. */
async function serve(
  env: Record<string, string | undefined>,
  local: ReturnType<typeof loadLocalConfig>,
  dataDir: string,
  lock: DataDirLock,
): Promise<void> {
  const { port, host } = local;
  assertJava();
  await assertPortFree(port, 'the ISR server; set PORT to use another', host);
  let requestStop: ((reason: string) => void) | undefined;
  const backends = await startLocalBackends({
    s3Directory: join(dataDir, 's3'),
    dynamoDbPath: join(dataDir, 'dynamodb'),
    fastStartup: true, // a development server: ready sooner matters more than peak throughput
    onUnexpectedExit: (what) => {
      console.error(`${what} while the service was running`);
      requestStop?.(what);
    },
  });
  try {
    const clients = createAwsClients({
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoints: backends.endpoints,
    });
    const workerMaxReceives = local.maxReceiveCount;
    const tableName = env.FACETHEORY_CACHE_TABLE_NAME ?? 'isr-cache';
    await ensureCacheTable(clients.dynamodb, tableName);
    await ensureBucket(clients.s3, env.ISR_BODY_BUCKET ?? 'isr-bodies');
    const queues = await ensureRegenerationQueues(clients.sqs, {
      name: 'isr-regeneration',
      visibilityTimeoutSeconds: (6 * WORKER_TIMEOUT_MS) / 1000,
      // local-aws-sqs redrives one receive earlier than SQS does; one more keeps the worker's own
      // last attempt (which dead-letters with a reason) the same as in AWS.
      maxReceiveCount: workerMaxReceives + 1,
    });
    const purges = await ensurePurgeQueues(clients.sqs, {
      name: 'isr-purge',
      visibilityTimeoutSeconds: (6 * PURGER_TIMEOUT_MS) / 1000,
      maxReceiveCount: workerMaxReceives + 1,
    });
    const serviceEnv = {
      ...env,
      ISR_QUEUE_URL: queues.queueUrl,
      ISR_DLQ_URL: queues.dlqUrl,
      ISR_PURGE_QUEUE_URL: purges.purgeQueueUrl,
      ISR_PURGE_DLQ_URL: purges.purgeDlqUrl,
      // The upstream is told the host viewers use here, as a deployment tells it its domain.
      ...(env.ISR_PUBLIC_ORIGIN === undefined && env.ISR_TENANT_HEADER === undefined
        ? { ISR_PUBLIC_ORIGIN: `http://localhost:${port}` }
        : {}),
    };
    const originConfig = loadOriginConfig(serviceEnv);
    // As deployed: behind a RESPONSE_STREAM function URL, in Lambda's runtime (played locally).
    installLambdaStreaming();
    const origin = {
      streaming: buildStreamingOriginHandler(originConfig, { clients, owner: 'local-origin' }),
    };
    // CloudFront as the construct would configure it for these settings (kept in .local/edge).
    const edge = await localCloudFront({
      settings: loadSettings('origin', serviceEnv),
      handler: origin,
      functionTimeoutMs: ORIGIN_TIMEOUT_MS,
      cacheDirectory: EDGE_CACHE_DIRECTORY,
      cache: local.edgeCache,
    });
    const workerConfig = loadWorkerConfig(serviceEnv);
    const worker = buildWorkerHandler(workerConfig, { clients, owner: 'local-worker' });
    const catchUp = startDeferredCatchUp(workerConfig, clients, (error) =>
      console.error('re-queueing deferred regenerations failed:', error),
    );

    // One local CDN: a revalidation's immediate purges and the purger's are numbered together.
    const cdn = new LocalCdnInvalidator({ edge: edge.cloudfront });
    const purger = buildPurgerHandler(loadPurgerConfig(serviceEnv), { clients, cdn });
    const revalidate = localRevalidation(local.revalidateSecret, host);
    const revalidateHandler =
      revalidate.mode === 'disabled'
        ? revalidate.handler
        : buildRevalidateHandler(loadRevalidateConfig(serviceEnv), {
            clients,
            owner: 'local-revalidate',
            cdn,
            revalidateSecret: revalidate.secret,
            revalidateOpen: revalidate.mode === 'open',
          });

    const front = await startHttpFront({
      handler: origin,
      revalidateHandler,
      port,
      host,
      tenantHeader: originConfig.tenantHeader,
      variantHeaders: originConfig.settings.variantHeaders.map((rule) => rule.name),
      cloudfront: edge.cloudfront,
      functionTimeoutMs: ORIGIN_TIMEOUT_MS,
      onError: (error) => console.error('origin handler failed:', error),
    });
    const poller = new WorkerPoller(
      {
        sqs: clients.sqs,
        queueUrl: queues.queueUrl,
        queueArn: queues.queueArn,
        handler: worker,
        batchSize: 5,
        waitTimeSeconds: 1,
        functionTimeoutMs: WORKER_TIMEOUT_MS,
      },
      (error) => console.error('worker poll failed:', error),
    );
    poller.start();
    const purgePoller = new WorkerPoller(
      {
        sqs: clients.sqs,
        queueUrl: purges.purgeQueueUrl,
        queueArn: purges.purgeQueueArn,
        handler: purger,
        batchSize: PURGER_BATCH_SIZE,
        waitTimeSeconds: 1,
        functionTimeoutMs: PURGER_TIMEOUT_MS,
        name: 'purger',
      },
      (error) => console.error('purger poll failed:', error),
    );
    purgePoller.start();

    // In this order: no new requests and the ones in flight answered (they may queue work), the
    // batch in hand finished and acknowledged, then the backends, DynamoDB Local closing its file.
    const stop = createShutdown([
      // First: the ops CLI must not find a service that is going away.
      { name: 'the endpoints file', run: () => removeEndpointsFile(dataDir) },
      { name: 'the HTTP server', run: () => front.close() },
      { name: 'the deferred-intent catch-up', run: () => catchUp.stop() },
      { name: 'the worker poller', run: () => poller.stop() },
      // After the worker: the batch it finished may have queued soft purges.
      { name: 'the purger poller', run: () => purgePoller.stop() },
      { name: 'the backends', run: () => backends.stop() },
      // Last: the next start may have the directory once DynamoDB Local has closed its file.
      { name: 'the data directory lock', run: () => lock.release() },
    ]);
    requestStop = stop;
    process.on('SIGINT', () => stop('SIGINT', { signal: true }));
    process.on('SIGTERM', () => stop('SIGTERM', { signal: true }));
    watchLaunchers(npmLaunchers(), (pid) => stop(`npm start's launcher (pid ${pid}) exited`));

    await writeEndpointsFile(dataDir, {
      httpUrl: front.url,
      region: LOCAL_REGION,
      endpoints: backends.endpoints,
      tableName,
      bucket: originConfig.bucket,
      queueUrl: queues.queueUrl,
      dlqUrl: queues.dlqUrl,
      revalidateUrl: `${front.url}${REVALIDATE_PATH}`,
      settings: {
        allowedQueryParams: [...originConfig.keyPolicy.allowedQueryParams],
        renderPaths: [...originConfig.renderPaths],
        tenantHeader: originConfig.tenantHeader,
        tenants: originConfig.tenants && [...originConfig.tenants],
        leaseSeconds: originConfig.leaseSeconds,
        retention: originConfig.retention,
        regenerationBudget: originConfig.regenerationBudget,
      },
      pid: process.pid,
    });

    const ready = readyLines({
      url: front.url,
      renderOriginUrl: originConfig.renderOriginUrl,
      defaultRevalidateSeconds: originConfig.defaultRevalidateSeconds,
      preset: env.ISR_PRESET,
    });
    console.log(
      `data: ${dataDir}  dynamodb: ${backends.endpoints.dynamodb}  s3: ${backends.endpoints.s3}  sqs: ${backends.endpoints.sqs}`,
    );
    console.log(ready.renderer);
    console.log(`revalidate: ${revalidate.describe(`${front.url}${REVALIDATE_PATH}`)}`);
    const caching = local.edgeCache
      ? 'caching as deployed (X-Cache, Age; ISR_LOCAL_EDGE_CACHE=0 turns it off)'
      : 'keeping nothing (ISR_LOCAL_EDGE_CACHE=0)';
    console.log(`cloudfront: the synthesized distribution (${describeEdge(edge)}), ${caching}`);
    console.log(ready.ready);
  } catch (error) {
    await backends.stop();
    throw error;
  }
}

/** One line on the local CloudFront: its behaviours, and whether it was synthesized now. */
function describeEdge(edge: Awaited<ReturnType<typeof localCloudFront>>): string {
  const patterns = edge.cloudfront.config.behaviours.map((behaviour) => behaviour.pathPattern);
  const source = edge.synthesized ? 'synthesized now' : 'kept from an earlier synth';
  return `behaviours ${patterns.join(' ')}, ${source}`;
}

function fail(error: unknown): never {
  console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

// With `npm start | tee log`, Ctrl-C ends the reader too: output then has nowhere to go, which
// must not crash the service half-way through its stop (in-flight work would be dropped).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

await main().catch(fail);
