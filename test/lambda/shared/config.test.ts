import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../../lambda/core/errors.js';
import {
  loadOriginConfig,
  loadSweeperConfig,
  loadWorkerConfig,
} from '../../../lambda/shared/config.js';

const base = {
  FACETHEORY_CACHE_TABLE_NAME: 'cache',
  ISR_BODY_BUCKET: 'bodies',
  ISR_DLQ_URL: 'http://localhost/q/dlq.fifo',
  ISR_QUEUE_URL: 'http://localhost/q/queue.fifo',
};
const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf';

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
      tenants: undefined,
      renderOriginUrl: undefined,
      upstreamSecret: undefined,
      functionTimeoutMs: undefined,
      localMode: false,
    });
  });

  it('caps bodies at 4 MiB by default, as the deploy does', () => {
    expect(loadOriginConfig(base).maxBodyBytes).toBe(4 * 1024 * 1024);
    expect(
      messageOf(() => loadOriginConfig({ ...base, ISR_MAX_BODY_BYTES: String(5 * 1024 * 1024) })),
    ).toContain('ISR_MAX_BODY_BYTES must be an integer 1..4194304');
  });

  it('names every missing or malformed variable', () => {
    const message = messageOf(() =>
      loadWorkerConfig({ ISR_LEASE_SECONDS: 'soon', ISR_LOCAL_MODE: 'yes' }),
    );
    for (const name of [
      'FACETHEORY_CACHE_TABLE_NAME',
      'ISR_BODY_BUCKET',
      'ISR_DLQ_URL',
      'ISR_LEASE_SECONDS',
      'ISR_LOCAL_MODE',
    ]) {
      expect(message).toContain(name);
    }
  });

  it('names every rule a well-typed environment breaks, at once', () => {
    const message = messageOf(() =>
      loadWorkerConfig({
        ...base,
        RENDER_ORIGIN_URL: 'ftp://x',
        ISR_REVALIDATE_SECONDS: '0',
        ISR_TENANTS: 'acme',
      }),
    );
    for (const name of ['RENDER_ORIGIN_URL', 'ISR_REVALIDATE_SECONDS', 'ISR_TENANTS']) {
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

  it('refuses a function timeout with no room for a render and its publish', () => {
    expect(
      messageOf(() => loadWorkerConfig({ ...base, ISR_FUNCTION_TIMEOUT_MS: '14000' })),
    ).toMatch(/ISR_FUNCTION_TIMEOUT_MS \(14000 ms\) must leave room/);
    expect(loadWorkerConfig({ ...base, ISR_FUNCTION_TIMEOUT_MS: '15000' }).functionTimeoutMs).toBe(
      15_000,
    );
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
      ISR_TENANTS: ' acme, globex.eu ,',
    });
    // one normal form at synth and cold start: sorted, duplicates dropped
    expect(config.keyPolicy.allowedQueryParams).toEqual(['lang', 'page']);
    expect(config.tenantHeader).toBe('x-tenant');
    expect(config.tenants).toEqual(['acme', 'globex.eu']);
  });

  it('refuses tenants the cache key would refuse, or without multi-tenant mode', () => {
    const tenanted = { ...base, ISR_TENANT_HEADER: 'x-tenant' };
    expect(messageOf(() => loadOriginConfig({ ...tenanted, ISR_TENANTS: 'acme,a#b' }))).toMatch(
      /ISR_TENANTS entry "a#b"/,
    );
    expect(messageOf(() => loadOriginConfig({ ...base, ISR_TENANTS: 'acme' }))).toMatch(
      /ISR_TENANTS needs ISR_TENANT_HEADER/,
    );
    // set but naming nobody fails closed instead of serving every tenant
    expect(messageOf(() => loadOriginConfig({ ...tenanted, ISR_TENANTS: ' , ' }))).toMatch(
      /ISR_TENANTS must name at least one tenant/,
    );
  });

  it('refuses tenants that differ only in case, keeping each as given (issue 19, item 8)', () => {
    const tenanted = { ...base, ISR_TENANT_HEADER: 'x-tenant' };
    // distinct pk, but one CDN tag: a purge in Acme would reach acme's objects
    expect(
      messageOf(() => loadOriginConfig({ ...tenanted, ISR_TENANTS: 'Acme,globex,acme,ACME' })),
    ).toContain(
      'ISR_TENANTS "ACME", "Acme", "acme" differ only in case: CloudFront compares cache tags ' +
        'without case, so a purge in one would reach the others',
    );
    expect(loadOriginConfig({ ...tenanted, ISR_TENANTS: 'Acme,globex' }).tenants).toEqual([
      'Acme',
      'globex',
    ]);
  });

  describe('upstream', () => {
    it('must be https unless it is a loopback host or local mode', () => {
      const upstream = { ...base, RENDER_ORIGIN_URL: 'http://ssr.internal:3001' };
      expect(messageOf(() => loadOriginConfig(upstream))).toMatch(
        /RENDER_ORIGIN_URL must be https/,
      );
      expect(loadOriginConfig({ ...upstream, ISR_LOCAL_MODE: '1' }).localMode).toBe(true);
      expect(
        loadOriginConfig({ ...base, RENDER_ORIGIN_URL: 'http://127.0.0.1:3001' }).renderOriginUrl,
      ).toBe('http://127.0.0.1:3001');
    });

    it('gets its secret as an ARN and a header, never a value', () => {
      const config = loadWorkerConfig({
        ...base,
        RENDER_ORIGIN_URL: 'https://ssr.example.com',
        ISR_UPSTREAM_SECRET_ARN: secretArn,
      });
      expect(config.upstreamSecret).toEqual({ arn: secretArn, header: 'x-isr-origin-secret' });
      expect(
        loadWorkerConfig({
          ...base,
          RENDER_ORIGIN_URL: 'https://ssr.example.com',
          ISR_UPSTREAM_SECRET_ARN: secretArn,
          ISR_UPSTREAM_SECRET_HEADER: 'X-Origin-Key',
        }).upstreamSecret,
      ).toEqual({ arn: secretArn, header: 'x-origin-key' });
    });

    it('refuses a secret header without a secret, and a secret without an upstream', () => {
      expect(
        messageOf(() => loadWorkerConfig({ ...base, ISR_UPSTREAM_SECRET_HEADER: 'x-key' })),
      ).toMatch(/ISR_UPSTREAM_SECRET_HEADER needs ISR_UPSTREAM_SECRET_ARN/);
      expect(
        messageOf(() => loadWorkerConfig({ ...base, ISR_UPSTREAM_SECRET_ARN: secretArn })),
      ).toMatch(/ISR_UPSTREAM_SECRET_ARN needs RENDER_ORIGIN_URL/);
    });
  });

  it('takes the lease owner from the Lambda runtime', () => {
    expect(loadOriginConfig({ ...base, AWS_LAMBDA_FUNCTION_NAME: 'isr-origin' }).functionName).toBe(
      'isr-origin',
    );
  });

  describe('sweeper', () => {
    it('applies its defaults: a 1-hour safety window, bounded pages', () => {
      expect(loadSweeperConfig(base)).toMatchObject({
        tableName: 'cache',
        bucket: 'bodies',
        bodyKeyPrefix: 'pages/',
        orphanAgeSeconds: 3_600,
        sweepPageLimit: 100,
        orphanListLimit: 500,
      });
    });

    it('names the missing variable and refuses a window a render could still publish in', () => {
      expect(messageOf(() => loadSweeperConfig({ FACETHEORY_CACHE_TABLE_NAME: 'cache' }))).toMatch(
        /ISR_BODY_BUCKET/,
      );
      const message = messageOf(() =>
        loadSweeperConfig({ ...base, ISR_LEASE_SECONDS: '120', ISR_ORPHAN_AGE_SECONDS: '1000' }),
      );
      expect(message).toMatch(/ISR_ORPHAN_AGE_SECONDS \(1000 s\) must exceed .* 1020 s/);
      expect(
        messageOf(() => loadSweeperConfig({ ...base, ISR_ORPHAN_LIST_LIMIT: '1001' })),
      ).toMatch(/ISR_ORPHAN_LIST_LIMIT must be an integer 1\.\.1000/);
    });
  });
});
