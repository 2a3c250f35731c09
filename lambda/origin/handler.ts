import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyStructuredResultV2, LambdaFunctionURLEvent } from 'aws-lambda';
import { MetricUnit } from '../shared/observability.js';
import { CacheStatus, type PageResponse } from '../core/serve/responses.js';
import { servePage, type OriginDeps, type PageRequest } from '../core/serve/serve.js';

export interface OriginHandlerOptions {
  readonly deps: OriginDeps;
  /** Lower-case name of the tenant header in multi-tenant mode. */
  readonly tenantHeader: string | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** Function URL event (payload 2.0, from CloudFront) -> origin request. Host is never read. */
export function toPageRequest(
  event: LambdaFunctionURLEvent,
  tenantHeader: string | undefined,
): PageRequest {
  const headers = event.headers ?? {};
  return {
    method: event.requestContext.http.method.toUpperCase(),
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString ?? '',
    tenant: tenantHeader === undefined ? undefined : headers[tenantHeader]?.trim(),
    ifNoneMatch: headers['if-none-match'],
    ifModifiedSince: headers['if-modified-since'],
    variantHeaders: headers,
  };
}

/** What the origin returns: the structured form of a function URL response. */
export type FunctionUrlResult = APIGatewayProxyStructuredResultV2;

const TEXTUAL = /^(text\/|application\/(json|xml|javascript|xhtml\+xml|[\w.+-]+\+(json|xml)))/i;

/** Text bodies go out as UTF-8, anything else base64-encoded. HEAD gets no body. */
export function toFunctionUrlResult(response: PageResponse, head: boolean): FunctionUrlResult {
  const result: FunctionUrlResult = {
    statusCode: response.status,
    headers: response.headers,
  };
  if (head || response.body === undefined) return result;
  const textual = TEXTUAL.test(response.headers['content-type'] ?? '');
  return {
    ...result,
    body: Buffer.from(response.body).toString(textual ? 'utf8' : 'base64'),
    isBase64Encoded: !textual,
  };
}

/** The metric each response counts towards, from what the use case decided. */
const metricFor = (response: PageResponse): string => {
  if (response.decision === 'not-modified') return 'NotModified';
  switch (response.cacheStatus) {
    case CacheStatus.Hit:
      return 'CacheHits';
    case CacheStatus.Stale:
      return 'CacheStale';
    case CacheStatus.Miss:
      return 'CacheMisses';
    default:
      if (response.status === 502) return 'RenderRefused';
      if (response.decision === 'render-failed') return 'RenderFailures';
      return response.status >= 500 ? 'OriginUnavailable' : 'BadRequests';
  }
};

/** The origin Lambda behind CloudFront: converts the event, serves, logs the decision. */
export function createOriginHandler(options: OriginHandlerOptions) {
  const { deps, tenantHeader, logger, metrics } = options;
  return middy(async (event: LambdaFunctionURLEvent): Promise<FunctionUrlResult> => {
    const started = performance.now();
    const request = toPageRequest(event, tenantHeader);
    const response = await servePage(deps, request);
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
      status: response.status,
      cache: response.cacheStatus,
      cacheKeyHash: response.cacheKeyHash,
      durationMs,
      ...response.detail,
    };
    if (response.status >= 500) logger.error('origin request failed', fields);
    else logger.info('origin request served', fields);
    return toFunctionUrlResult(response, request.method === 'HEAD');
  })
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics));
}
