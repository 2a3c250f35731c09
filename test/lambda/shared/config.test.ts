import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../../lambda/core/errors.js';
import { loadOriginConfig, loadWorkerConfig } from '../../../lambda/shared/config.js';

const base = {
  FACETHEORY_CACHE_TABLE_NAME: 'cache',
  ISR_BODY_BUCKET: 'bodies',
  ISR_DLQ_URL: 'http://localhost/q/dlq.fifo',
  ISR_QUEUE_URL: 'http://localhost/q/queue.fifo',
};

const messageOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('configuration', () => {
  it('applies documented defaults', () => {
    const config = loadWorkerConfig(base);
    expect(config).toMatchObject({
      leaseSeconds: 30,
      clockSkewMarginSeconds: 2,
      renderTimeoutMs: 10_000,
      defaultRevalidateSeconds: 60,
      maxReceiveCount: 5,
      keyPolicy: { allowedQueryParams: [] },
      tenantHeader: undefined,
      renderOriginUrl: undefined,
    });
  });

  it('names every missing or malformed variable', () => {
    const message = messageOf(() =>
      loadWorkerConfig({ ISR_LEASE_SECONDS: 'soon', RENDER_ORIGIN_URL: 'ftp://x' }),
    );
    for (const name of [
      'FACETHEORY_CACHE_TABLE_NAME',
      'ISR_BODY_BUCKET',
      'ISR_DLQ_URL',
      'ISR_LEASE_SECONDS',
      'RENDER_ORIGIN_URL',
    ]) {
      expect(message).toContain(name);
    }
  });

  it('refuses a render timeout that does not fit inside the lease', () => {
    expect(
      messageOf(() =>
        loadWorkerConfig({ ...base, ISR_LEASE_SECONDS: '5', ISR_RENDER_TIMEOUT_MS: '5000' }),
      ),
    ).toMatch(/ISR_RENDER_TIMEOUT_MS.*below the lease/);
  });

  it('refuses a clock-skew margin that leaves no lease to render in', () => {
    expect(
      messageOf(() =>
        loadWorkerConfig({
          ...base,
          ISR_LEASE_SECONDS: '10',
          ISR_CLOCK_SKEW_MARGIN_SECONDS: '10',
          ISR_RENDER_TIMEOUT_MS: '5000',
        }),
      ),
    ).toMatch(/ISR_CLOCK_SKEW_MARGIN_SECONDS.*below the lease/);
  });

  it('refuses a dedupe window SQS would outlast', () => {
    expect(
      messageOf(() => loadOriginConfig({ ...base, ISR_DEDUPE_WINDOW_SECONDS: '300' })),
    ).toContain('ISR_DEDUPE_WINDOW_SECONDS');
  });

  it('parses lists and lower-cases the tenant header', () => {
    const config = loadOriginConfig({
      ...base,
      ISR_ALLOWED_QUERY_PARAMS: ' page, lang ,',
      ISR_TENANT_HEADER: 'X-Tenant',
    });
    expect(config.keyPolicy.allowedQueryParams).toEqual(['page', 'lang']);
    expect(config.tenantHeader).toBe('x-tenant');
  });
});
