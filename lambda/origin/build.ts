import { HttpPassThrough } from '../adapters/pass-through/http.js';
import { publicOriginOf } from '../core/forwarding.js';
import { publicOriginsOf } from '../core/tenant-origins.js';
import { SqsRegenerationQueue } from '../adapters/regeneration-queue/sqs.js';
import { DynamoRevalidationsInProgress } from '../adapters/revalidations-in-progress/dynamodb.js';
import { RenderAdmission } from '../core/regenerate/admission.js';
import { systemClock } from '../core/clock.js';
import { InProgressReader } from '../core/page/in-progress.js';
import type { LogSink } from '../core/log.js';
import type { OriginConfig } from '../shared/config.js';
import { observabilityOf, type Observed } from '../shared/observability.js';
import {
  createRegenerateDeps,
  upstreamSecretHeader,
  type ServiceRuntime,
} from '../shared/service.js';
import { createStreamingOriginHandler } from './streaming.js';
import { createBudgetDeps } from '../shared/budget.js';
import type { OriginDeps } from '../core/serve/request.js';
import type { RegenerateDeps } from '../core/regenerate/deps.js';
import { regenerateInRequest } from '../core/regenerate/regenerate.js';

/** The origin's use-case dependencies, from validated configuration and injected clients. */
export function createOriginDeps(
  config: OriginConfig,
  runtime: ServiceRuntime,
  log: LogSink,
): OriginDeps & RegenerateDeps {
  const regenerateDeps = createRegenerateDeps(config, runtime, log);
  return {
    ...regenerateDeps,
    regenerate: regenerateInRequest,
    admission:
      config.missRenderLimit > 0
        ? new RenderAdmission(
            regenerateDeps.cacheTable,
            { limit: config.missRenderLimit },
            runtime.random,
          )
        : undefined,
    overloadFallbackPath: config.overloadFallbackPath,
    keyPolicy: config.keyPolicy,
    tenancy:
      config.tenantHeader === undefined
        ? undefined
        : { header: config.tenantHeader, tenants: config.tenants },
    queue: new SqsRegenerationQueue({ client: runtime.clients.sqs, queueUrl: config.queueUrl }),
    budget: createBudgetDeps(config, runtime.clients),
    deployId: config.deployId,
    cacheTagHeader: config.cacheTagHeader,
    dedupeWindowSeconds: config.dedupeWindowSeconds,
    missWaitMs: config.missWaitMs,
    maxVariantsPerPage: config.settings.maxVariantsPerPage,
    routing:
      config.renderOriginUrl === undefined
        ? undefined
        : {
            bypassPaths: config.settings.bypassPaths,
            staticPrefixes: config.settings.staticPrefixes,
          },
    passThrough: createOriginPassThrough(config, upstreamSecretHeader(config, runtime)),
    passTimeoutMs: config.passTimeoutMs,
    // The upstream's tags are for the service; CloudFront's cache tag header is on pages only.
    internalAnswerHeaders: config.headerPolicy.internal,
    retryAfterSeconds: config.retryAfterSeconds,
    caching: {
      staleSharedMaxAge: config.staleSharedMaxAge,
      staleWhileRevalidateSeconds: config.staleWhileRevalidateSeconds,
      staleIfErrorSeconds: config.staleIfErrorSeconds,
      nextCacheHeader: config.nextCacheHeader,
    },
    owner: runtime.owner,
    // Built once per container: its reads of the in-progress rows are reused for a moment.
    inProgress: new InProgressReader(
      {
        rows: new DynamoRevalidationsInProgress({
          client: runtime.clients.dynamodb,
          tableName: config.tableName,
        }),
        shards: config.revalidationShards,
        cacheMs: config.inProgressCacheMs,
      },
      runtime.clock ?? systemClock,
    ),
  };
}

/**
 * With an upstream, what the cache does not answer is passed to it; the demo has none (405).
 * The tenant header is not dropped here: the pass sets the validated tenant (`servePass`).
 */
export function createOriginPassThrough(
  config: OriginConfig,
  secretHeader: ReturnType<typeof upstreamSecretHeader>,
): HttpPassThrough | undefined {
  if (config.renderOriginUrl === undefined) return undefined;
  return new HttpPassThrough({
    originUrl: config.renderOriginUrl,
    maxBodyBytes: config.passBodyMaxBytes,
    secretHeader,
    publicOrigin: publicOriginOf(config.publicOrigin),
    // Multi-tenant: the validated tenant's origin, never the forwarded host a request carried.
    tenantOrigins:
      config.tenantHeader === undefined
        ? undefined
        : {
            header: config.tenantHeader,
            origins: publicOriginsOf(config.settings.tenantOrigins) ?? new Map(),
          },
  });
}

type OriginRuntime = ServiceRuntime & Observed;

/** The handler's options from validated configuration and injected clients. */
function originHandlerOptions(config: OriginConfig, runtime: OriginRuntime) {
  const { logger, metrics } = observabilityOf(runtime, 'origin');
  return {
    deps: createOriginDeps(config, runtime, logger),
    tenantHeader: config.tenantHeader,
    logger,
    metrics,
  };
}

/**
 * The origin as deployed, behind a RESPONSE_STREAM function URL: passes stream. Needs the
 * `awslambda` global the Node.js runtime sets (`local/lambda-streaming.ts` plays it locally).
 */
export function buildStreamingOriginHandler(config: OriginConfig, runtime: OriginRuntime) {
  return createStreamingOriginHandler(originHandlerOptions(config, runtime));
}
