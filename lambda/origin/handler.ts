import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type {
  APIGatewayProxyStructuredResultV2,
  Context,
  LambdaFunctionURLEvent,
} from 'aws-lambda';
import { MetricUnit } from '../shared/observability.js';
import { fitAnswerHeaders } from '../core/serve/header-budget.js';
import { ServeDecision } from '../core/serve/decision.js';
import { CacheStatus, type PageResponse } from '../core/serve/responses.js';
import { servePage } from '../core/serve/serve.js';
import type { OriginDeps, PageRequest } from '../core/serve/request.js';

export interface OriginHandlerOptions {
  readonly deps: OriginDeps;
  /** Lower-case name of the tenant header in multi-tenant mode. */
  readonly tenantHeader: string | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/**
 * Function URL event (payload 2.0, from CloudFront) -> origin request. The viewer's headers,
 * cookies (payload 2.0 lists them apart) and body ride along for a pass-through only.
 */
export function toPageRequest(
  event: LambdaFunctionURLEvent,
  tenantHeader: string | undefined,
): PageRequest {
  const headers = event.headers ?? {};
  const cookies = event.cookies ?? [];
  return {
    method: event.requestContext.http.method.toUpperCase(),
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString ?? '',
    tenant: tenantHeader === undefined ? undefined : headers[tenantHeader]?.trim(),
    ifNoneMatch: headers['if-none-match'],
    ifModifiedSince: headers['if-modified-since'],
    variantHeaders: headers,
    headers: [
      ...Object.entries(headers).filter(
        (entry): entry is [string, string] => entry[0] !== 'cookie' && entry[1] !== undefined,
      ),
      ...(cookies.length > 0 ? [['cookie', cookies.join('; ')] as const] : []),
    ],
    body:
      event.body === undefined
        ? undefined
        : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8'),
  };
}

/**
 * The structured form of a BUFFERED function URL's answer (the revalidate endpoint's; the local
 * fronts read it). The origin streams instead (`streaming.ts`).
 */
export type FunctionUrlResult = APIGatewayProxyStructuredResultV2;

/** The metric each response counts towards, from what the use case decided. */
const metricFor = (response: PageResponse): string => {
  if (response.decision === ServeDecision.NotModified) return 'NotModified';
  switch (response.cacheStatus) {
    case CacheStatus.Hit:
      return 'CacheHits';
    case CacheStatus.Stale:
      return 'CacheStale';
    case CacheStatus.Miss:
      return 'CacheMisses';
    case CacheStatus.Pass:
      return response.decision === ServeDecision.HitForPass ? 'HitForPass' : 'PassThrough';
    default:
      if (response.status === 502) return 'RenderRefused';
      if (response.decision === ServeDecision.RenderFailed) return 'RenderFailures';
      return response.status >= 500 ? 'OriginUnavailable' : 'BadRequests';
  }
};

/** A served request, logged and counted: what the streaming handler sends. */
export interface ServedEvent {
  readonly response: PageResponse;
  readonly head: boolean;
}

/** Converts the event, serves, fits the headers, logs the decision and counts it. */
export async function serveEvent(
  options: OriginHandlerOptions,
  event: LambdaFunctionURLEvent,
  context: Context,
): Promise<ServedEvent> {
  const { deps, tenantHeader, logger, metrics } = options;
  const started = performance.now();
  const request = toPageRequest(event, tenantHeader);
  // Within what CloudFront takes of an origin's headers; what was cut is logged.
  const { response, trimmed } = fitAnswerHeaders(await servePage(deps, request), {
    cacheTagHeader: deps.cacheTagHeader,
    sharedMaxAgeWithoutTags: deps.caching.staleSharedMaxAge,
  });
  const durationMs = Math.round(performance.now() - started);
  metrics.addMetric(metricFor(response), MetricUnit.Count, 1);
  metrics.addMetric('OriginLatency', MetricUnit.Milliseconds, durationMs);
  const enqueue = response.detail?.enqueue;
  if (enqueue === 'enqueue-failed') metrics.addMetric('EnqueueFailures', MetricUnit.Count, 1);
  if (enqueue === 'backing-off') metrics.addMetric('RegenerationsDeferred', MetricUnit.Count, 1);
  if (enqueue === 'broken') metrics.addMetric('BrokenPageHits', MetricUnit.Count, 1);
  if (response.detail?.bodyMissing !== undefined)
    metrics.addMetric('BodyMissing', MetricUnit.Count, 1);
  const fields = {
    decision: response.decision,
    // The use case's key (a queued intent's, a MISS's regeneration's), else this request's.
    idempotencyKey: response.idempotencyKey ?? context.awsRequestId,
    status: response.status,
    cache: response.cacheStatus,
    cacheKeyHash: response.cacheKeyHash,
    durationMs,
    ...(response.stream === undefined ? {} : { streamed: true }),
    ...response.detail,
    ...(trimmed.length === 0 ? {} : { headersTrimmed: trimmed }),
  };
  if (response.status >= 500) logger.error('origin request failed', fields);
  else logger.info('origin request served', fields);
  return { response, head: request.method === 'HEAD' };
}
