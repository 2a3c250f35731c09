/**
 * The service's use cases wired to in-memory fakes of every port: the unit tier (no Java, no
 * backends). Settings mirror the deployed defaults where a test does not set them.
 */
import type { Context } from 'aws-lambda';
import { normaliseCacheKey, type CacheKeyPolicy } from '../../lambda/core/page/cache-key.js';
import type { PassThrough } from '../../lambda/core/serve/ports.js';
import type { Renderer } from '../../lambda/core/regenerate/ports.js';
import type { RegenerateDeps } from '../../lambda/core/regenerate/deps.js';
import { regenerateInRequest } from '../../lambda/core/regenerate/regenerate.js';
import type { LogSink } from '../../lambda/core/log.js';
import type { OriginDeps } from '../../lambda/core/serve/request.js';
import { createIdempotencyConfig } from '../../lambda/core/idempotency.js';
import type { WorkerDeps } from '../../lambda/core/worker/deps.js';
import { TestClock } from './clock.js';
import { InMemoryBodyStore } from '../../lambda/adapters/body-store/memory.js';
import { InMemoryCacheTable } from '../../lambda/adapters/cache-table/memory.js';
import { MemoryTable } from '../../lambda/adapters/shared/memory-table.js';
import { InMemoryPageHistory } from '../../lambda/adapters/page-history/memory.js';
import { InMemoryRegenerationQueue } from '../../lambda/adapters/regeneration-queue/memory.js';
import { InMemoryRequestStore } from '../../lambda/adapters/request-store/memory.js';
import { InMemoryRevalidationMarks } from '../../lambda/adapters/revalidation-marks/memory.js';
import { InMemoryTagIndex } from '../../lambda/adapters/tag-index/memory.js';

/** A Lambda context whose remaining time is fixed, so claims expire on the test clock alone. */
export function fixedContext(remainingMs: number, functionName = 'unit'): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: 'request-1',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'unit',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export interface MemoryServiceOptions {
  readonly renderer: Renderer;
  readonly clock?: TestClock;
  readonly keyPolicy?: CacheKeyPolicy;
  /** The upstream for pass-through. @default - none: other methods get 405, refusals a 502 */
  readonly passThrough?: PassThrough | undefined;
  /** @default 0 - no hit-for-pass mark */
  readonly hitForPassSeconds?: number | undefined;
}

export function memoryService(options: MemoryServiceOptions) {
  const clock = options.clock ?? new TestClock();
  const state = new MemoryTable();
  const cacheTable = new InMemoryCacheTable(state);
  const bodies = new InMemoryBodyStore();
  const queue = new InMemoryRegenerationQueue();
  const warnings: string[] = [];
  const log: LogSink = { warn: (message) => warnings.push(message) };
  const keyPolicy = options.keyPolicy ?? { allowedQueryParams: ['page'] };

  const marks = new InMemoryRevalidationMarks(state);
  const tagIndex = new InMemoryTagIndex(state);
  const history = new InMemoryPageHistory(state);
  const regenerateDeps: RegenerateDeps = {
    cacheTable,
    bodies,
    tagIndex,
    versions: history,
    renderer: options.renderer,
    clock,
    leaseSeconds: 30,
    clockSkewMarginSeconds: 2,
    renderTimeoutMs: 2_000,
    defaultRevalidateSeconds: 60,
    maxBodyBytes: 1024 * 1024,
    hitForPassSeconds: options.hitForPassSeconds,
    log,
  };
  const idempotencyConfig = createIdempotencyConfig(86_400);
  idempotencyConfig.registerLambdaContext(fixedContext(60_000, 'unit-worker'));
  const requests = new InMemoryRequestStore(state, clock);
  const workerDeps: WorkerDeps = {
    ...regenerateDeps,
    keyPolicy,
    idempotency: { store: requests, config: idempotencyConfig },
    maxReceiveCount: 5,
    owner: 'unit-worker',
  };
  const originDeps: OriginDeps & RegenerateDeps = {
    ...regenerateDeps,
    regenerate: regenerateInRequest,
    keyPolicy,
    queue,
    deployId: 'd1',
    cacheTagHeader: 'x-isr-cache-tags',
    dedupeWindowSeconds: 30,
    missWaitMs: 200,
    passThrough: options.passThrough,
    passTimeoutMs: 5_000,
    retryAfterSeconds: 2,
    caching: { staleSharedMaxAge: 2, staleWhileRevalidateSeconds: 60, staleIfErrorSeconds: 86_400 },
    owner: 'unit-origin',
  };
  return {
    clock,
    state,
    cacheTable,
    bodies,
    queue,
    requests,
    warnings,
    marks,
    tagIndex,
    history,
    regenerateDeps,
    workerDeps,
    originDeps,
    keyFor: (rawPath: string, rawQueryString = '', tenant?: string) =>
      normaliseCacheKey({ rawPath, rawQueryString, tenant }, keyPolicy),
  };
}

export type MemoryService = ReturnType<typeof memoryService>;
