import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type {
  Context,
  LambdaFunctionURLEvent,
  LambdaFunctionURLEventWithIAMAuthorizer,
} from 'aws-lambda';
import type { FunctionUrlResult } from '../origin/handler.js';
import { MetricUnit, publishMetrics } from '../shared/observability.js';
import type { RevalidateDecision } from '../core/revalidate/serve-revalidation.js';
import {
  serveRevalidation,
  type RevalidateHttpRequest,
  type RevalidateServiceDeps,
} from '../core/revalidate/serve-revalidation.js';

export interface RevalidateHandlerOptions {
  readonly deps: RevalidateServiceDeps;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/** Function URL event (payload 2.0) -> the request: raw body as sent, the IAM caller if any. */
export function toRevalidateRequest(event: LambdaFunctionURLEvent): RevalidateHttpRequest {
  const body = event.body ?? '';
  const query = event.rawQueryString ?? '';
  return {
    method: event.requestContext.http.method.toUpperCase(),
    target: query === '' ? event.rawPath : `${event.rawPath}?${query}`,
    headers: event.headers ?? {},
    rawBody: event.isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body,
    // Present only under AWS_IAM auth: the caller the function URL authenticated.
    principal: (event as Partial<LambdaFunctionURLEventWithIAMAuthorizer>).requestContext
      ?.authorizer?.iam?.userArn,
  };
}

/** The metric each decision counts towards. */
const METRICS: Record<RevalidateDecision, string> = {
  new: 'Revalidations',
  duplicate: 'RevalidationReplays',
  conflict: 'RevalidationConflicts',
  'in-progress': 'RevalidationsInProgress',
  invalid: 'RevalidationsInvalid',
  unauthorized: 'RevalidationsUnauthorized',
  failed: 'RevalidationFailures',
  status: 'RevalidationStatusReads',
  'tag-times': 'TagTimeReads',
};

/**
 * The revalidate Lambda behind its own function URL: converts the event, serves it, logs the
 * decision with the idempotency key, effect, caller and counts. The Lambda context times the
 * claim, so a crashed invocation's key is free again once its time is up.
 */
export function createRevalidateHandler(options: RevalidateHandlerOptions) {
  const { deps, logger, metrics } = options;
  return middy(
    async (event: LambdaFunctionURLEvent, context: Context): Promise<FunctionUrlResult> => {
      deps.idempotency.config.registerLambdaContext(context);
      const reply = await serveRevalidation(deps, toRevalidateRequest(event));
      metrics.addMetric(METRICS[reply.log.decision], MetricUnit.Count, 1);
      const fields = { ...reply.log, status: reply.status };
      if (reply.status >= 500) logger.error('revalidation failed', fields);
      // A data cache reads tag times up to 4 times a second per instance: counted, logged at debug.
      else if (reply.log.decision === 'tag-times') logger.debug('tag times read', fields);
      else logger.info('revalidation request', fields);
      return { statusCode: reply.status, headers: reply.headers, body: reply.body };
    },
  )
    .use(injectLambdaContext(logger))
    .use(publishMetrics(metrics));
}
