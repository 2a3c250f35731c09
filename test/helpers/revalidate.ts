import type { CdnInvalidator, CdnPurge } from '../../lambda/core/ports.js';
import type { RevalidateHttpRequest } from '../../lambda/revalidate/serve-revalidation.js';

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
  init: { key?: string; headers?: Record<string, string>; principal?: string } = {},
): RevalidateHttpRequest {
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(init.key === undefined ? {} : { 'idempotency-key': init.key }),
      ...init.headers,
    },
    rawBody: typeof body === 'string' ? body : JSON.stringify(body),
    principal: init.principal,
  };
}
