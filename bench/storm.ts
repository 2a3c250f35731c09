/**
 * Storm: N concurrent requests on one stale key. Counts what reaches the origin's queue and how
 * many renders follow once the queue is drained, for the ISR service and for the naive baseline.
 */
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createOriginDeps } from '../lambda/origin/build.js';
import { collecting, streamingOrigin } from '../test/helpers/streaming-origin.js';
import { createObservability } from '../lambda/shared/observability.js';
import { buildWorkerHandler } from '../lambda/worker/build.js';
import { lambdaContext, pollOnce } from '../local/worker-poller.js';
import { getEvent, scenario, type Backends } from './fixture.js';
import { naiveWorker, undedupedQueue } from './naive-isr.js';
import { progress } from './stats.js';

export interface StormResult {
  readonly system: 'isr' | 'baseline';
  readonly requests: number;
  readonly served: number;
  readonly errors: number;
  readonly queueMessages: number;
  readonly renders: number;
  readonly stormMs: number;
}

export async function storm(
  backends: Backends,
  requests: number,
  system: StormResult['system'],
): Promise<StormResult> {
  const s = await scenario(backends);
  try {
    const runtime = { clients: s.clients, clock: s.clock, renderer: s.renderer };
    const deps = createOriginDeps(s.originConfig, runtime, { warn: () => undefined });
    const origin = collecting(
      streamingOrigin({
        deps: system === 'isr' ? deps : { ...deps, queue: undedupedQueue(deps.queue) },
        tenantHeader: undefined,
        ...createObservability('origin'),
      }),
    );
    const worker: (event: SQSEvent) => Promise<SQSBatchResponse> =
      system === 'isr'
        ? (event) => buildWorkerHandler(s.workerConfig, runtime)(event, lambdaContext(60_000))
        : naiveWorker(s);

    await origin(getEvent('/storm'), lambdaContext(30_000)); // the first render (a MISS)
    const rendersBefore = s.renders.count;
    s.clock.advance(61); // stale now

    const label = `storm ${system} x${requests}`;
    let done = 0;
    const started = performance.now();
    const replies = await Promise.all(
      Array.from({ length: requests }, async () => {
        const reply = await origin(getEvent('/storm'), lambdaContext(30_000));
        progress(`${label}: requests`, ++done, requests);
        return reply;
      }),
    );
    const stormMs = performance.now() - started;
    const served = replies.filter((reply) => reply.statusCode === 200).length;

    const { Attributes } = await s.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: s.queues.queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    const queueMessages = Number(Attributes?.ApproximateNumberOfMessages ?? NaN);
    let drained = 0;
    for (;;) {
      const { received } = await pollOnce({
        sqs: s.clients.sqs,
        queueUrl: s.queues.queueUrl,
        queueArn: s.queues.queueArn,
        handler: (event) => worker(event),
        batchSize: 10,
        waitTimeSeconds: 0,
      });
      if (received === 0) break;
      drained += received;
      progress(`${label}: worker`, drained, queueMessages);
    }
    return {
      system,
      requests,
      served,
      errors: requests - served,
      queueMessages,
      renders: s.renders.count - rendersBefore,
      stormMs,
    };
  } finally {
    s.destroy();
  }
}
