import { jest } from '@jest/globals';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { publishMetrics } from '../../../lambda/shared/observability.js';

/** Metrics whose warnings are captured, and a handler that records `record` metrics. */
function invoke(middleware: (metrics: Metrics) => MiddlewareObj, record: number) {
  const warnings: string[] = [];
  const logger = {
    warn: (message: string) => warnings.push(message),
    debug: () => undefined,
    info: () => undefined,
    error: () => undefined,
  };
  const metrics = new Metrics({ namespace: 'Test', serviceName: 'test', logger });
  const publish = jest.spyOn(metrics, 'publishStoredMetrics');
  const handler = middy(() => {
    metrics.addDimension('page', 'home');
    for (let i = 0; i < record; i += 1) metrics.addMetric('Served', MetricUnit.Count, 1);
    return Promise.resolve('ok');
  }).use(middleware(metrics));
  return { metrics, warnings, publish, run: () => handler({}, {} as Context) };
}

const noMetricsWarning = (warnings: string[]) =>
  warnings.filter((warning) => warning.startsWith('No application metrics to publish'));

describe('publishMetrics', () => {
  it('publishes an invocation that recorded metrics', async () => {
    const { publish, warnings, run } = invoke(publishMetrics, 2);
    await run();
    expect(publish).toHaveBeenCalledTimes(1);
    expect(warnings).toEqual([]);
  });

  it('does not warn for an invocation that recorded none, where logMetrics does', async () => {
    const quiet = invoke(publishMetrics, 0);
    await quiet.run();
    expect(quiet.publish).not.toHaveBeenCalled();
    expect(quiet.warnings).toEqual([]);

    // Negative control: the library's own middleware warns on the same invocation.
    const library = invoke((metrics) => logMetrics(metrics), 0);
    await library.run();
    expect(noMetricsWarning(library.warnings)).toHaveLength(1);
  });

  it("clears an unpublished invocation's dimensions, as publishing would", async () => {
    const { metrics, run } = invoke(publishMetrics, 0);
    await run();
    metrics.addMetric('Later', MetricUnit.Count, 1);
    const dimensions = metrics.serializeMetrics()._aws.CloudWatchMetrics[0]?.Dimensions ?? [];
    expect(dimensions.flat()).not.toContain('page');
  });

  it('keeps the library’s other warnings', async () => {
    const { metrics, warnings, run } = invoke(publishMetrics, 0);
    metrics.addDimension('', 'empty name');
    await run();
    expect(warnings).toHaveLength(1);
    expect(noMetricsWarning(warnings)).toEqual([]);
  });
});
