import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import type { Decision } from '../core/decision.js';

export const METRICS_NAMESPACE = 'FaceTheoryIsr';

/** Powertools Logger and Metrics for one of the service's functions. */
export function createObservability(
  serviceName: 'origin' | 'worker' | 'sweeper' | 'revalidate' | 'purger',
) {
  return {
    logger: new Logger({ serviceName: `isr-${serviceName}` }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: `isr-${serviceName}` }),
  };
}

export type Observability = ReturnType<typeof createObservability>;

/** A runtime that may bring its own logger and metrics (tests, local mode). */
export interface Observed {
  readonly observability?: Observability | undefined;
}

/** The runtime's logger and metrics, else the function's own. */
export const observabilityOf = (
  runtime: Observed,
  serviceName: Parameters<typeof createObservability>[0],
): Observability => runtime.observability ?? createObservability(serviceName);

/**
 * Publishes an invocation's metrics when it recorded any. Powertools' `logMetrics` warns "No
 * application metrics to publish" on every invocation that recorded none (a HIT, an idle sweep),
 * which is expected here; its other warnings still reach the log.
 */
export function publishMetrics(metrics: Metrics): MiddlewareObj {
  const publish = () => {
    if (metrics.hasStoredMetrics()) {
      metrics.publishStoredMetrics();
      return;
    }
    // What publishing clears: no dimension or metadata of this invocation leaks into the next.
    metrics.clearDimensions();
    metrics.clearMetadata();
  };
  return { after: publish, onError: publish };
}

/** The metric each decision counts towards (alarms and dashboards key on these names). */
const DECISION_METRICS: Record<Decision, string> = {
  new: 'Regenerations',
  unchanged: 'RegenerationsUnchanged',
  gone: 'GonePagesStored',
  fresh: 'SkippedFresh',
  duplicate: 'DuplicatesDropped',
  conflict: 'IdempotencyConflicts',
  'lease-held': 'LeaseContention',
  'lease-lost': 'LeaseLost',
  superseded: 'Superseded',
  refused: 'RenderRefused',
  'render-failed': 'RenderFailures',
  backoff: 'SkippedBackoff',
  'in-progress': 'InProgressRetries',
  retry: 'RetryableFailures',
  poison: 'PoisonMessages',
  ignored: 'Ignored',
  held: 'SkippedHeld',
  deferred: 'RegenerationsDeferred',
};

export function countDecision(metrics: Metrics, decision: Decision): void {
  metrics.addMetric(DECISION_METRICS[decision], MetricUnit.Count, 1);
}

export { MetricUnit };
