import { InMemoryRevalidationStatuses } from '../../lambda/adapters/revalidation-status/memory.js';
import type { CdnInvalidator, CdnPurge } from '../../lambda/core/page/ports.js';
import { htmlPage } from '../../lambda/adapters/renderer/module.js';
import type {
  CallerAuth,
  RevalidateHttpRequest,
  RevalidateServiceDeps,
} from '../../lambda/core/revalidate/serve-revalidation.js';
import { createIdempotencyConfig } from '../../lambda/core/idempotency.js';
import { fixedContext, memoryService } from './memory-service.js';
import { countingRenderer } from './renderers.js';

/** A CDN purger that records every purge and answers with a numbered invalidation. */
export function recordingCdn(): CdnInvalidator & { purges: string[][] } {
  const purges: string[][] = [];
  return {
    purges,
    invalidateTags: (tags: readonly string[]): Promise<CdnPurge> => {
      purges.push([...tags]);
      return Promise.resolve({ status: 'submitted', invalidationIds: [`I${purges.length}`] });
    },
  };
}

/** A POST to the endpoint: the body as JSON text (or as given), an Idempotency-Key if any. */
export function revalidateRequest(
  body: unknown,
  init: {
    key?: string;
    headers?: Record<string, string>;
    principal?: string;
    method?: string;
    target?: string;
  } = {},
): RevalidateHttpRequest {
  return {
    method: init.method ?? 'POST',
    target: init.target ?? '/_isr/revalidate',
    headers: {
      'content-type': 'application/json',
      ...(init.key === undefined ? {} : { 'idempotency-key': init.key }),
      ...init.headers,
    },
    rawBody: typeof body === 'string' ? body : JSON.stringify(body),
    principal: init.principal,
  };
}

/**
 * The revalidate endpoint's dependencies on the in-memory ports: open auth and the default
 * limits unless told otherwise. The store, marks and queue are `service`'s, so a test reads back
 * what a call did.
 */
export function memoryRevalidation(
  options: { auth?: CallerAuth; policy?: Partial<RevalidateServiceDeps['policy']> } = {},
) {
  const service = memoryService({
    renderer: countingRenderer((request) => htmlPage(`<p>${request.cacheKey.key}</p>`)).renderer,
  });
  const cdn = recordingCdn();
  const config = createIdempotencyConfig(7 * 86_400);
  config.registerLambdaContext(fixedContext(30_000, 'unit-revalidate'));
  const deps: RevalidateServiceDeps = {
    revalidation: {
      marks: service.marks,
      tagIndex: service.tagIndex,
      queue: service.queue,
      cdn,
      clock: service.clock,
      deployId: 'd1',
    },
    statuses: new InMemoryRevalidationStatuses(),
    policy: {
      keyPolicy: { allowedQueryParams: [] },
      tenancy: undefined,
      maxPaths: 10,
      maxTags: 10,
      ...options.policy,
    },
    auth: options.auth ?? { kind: 'open' },
    idempotency: { store: service.requests, config },
    clock: service.clock,
    retryAfterSeconds: 1,
  };
  return { service, cdn, deps };
}
