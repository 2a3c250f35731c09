import { describe, expect, it } from '@jest/globals';
import { InvalidCacheKeyError } from '../../../lambda/core/errors.js';
import { normaliseCacheKey } from '../../../lambda/core/cache-key.js';
import { TENANT_PATTERN } from '../../../lambda/core/rows.js';
import {
  isLoopbackHost,
  MAX_BODY_BYTES,
  SETTING_DEFAULTS,
  settingsProblems,
  type FunctionCheck,
  type ServiceSettings,
} from '../../../lambda/core/settings.js';

const service: ServiceSettings = {
  renderOriginUrl: undefined,
  allowedQueryParams: [],
  tenantHeader: undefined,
  tenants: undefined,
  deployId: SETTING_DEFAULTS.deployId,
  revalidateSeconds: SETTING_DEFAULTS.revalidateSeconds,
  leaseSeconds: SETTING_DEFAULTS.leaseSeconds,
  clockSkewMarginSeconds: SETTING_DEFAULTS.clockSkewMarginSeconds,
  renderTimeoutMs: SETTING_DEFAULTS.renderTimeoutMs,
  maxBodyBytes: SETTING_DEFAULTS.maxBodyBytes,
  metaTtlSeconds: undefined,
  goneTtlSeconds: undefined,
  keepVersions: SETTING_DEFAULTS.keepVersions,
  renderPaths: [],
  keptHeaders: ['content-security-policy'],
  setCookie: 'strip',
  bodyKeyPrefix: 'pages/',
  cacheTagHeader: 'x-isr-cache-tags',
  upstreamTagHeader: 'cache-tag',
  upstreamSecret: undefined,
};

const worker = (timeoutMs: number | undefined): FunctionCheck => ({
  kind: 'worker',
  timeoutMs,
  settings: { maxReceiveCount: 5, idempotencyTtlSeconds: 86_400 },
});
const origin = (
  timeoutMs: number | undefined,
  missWaitMs = 5_000,
): Extract<FunctionCheck, { kind: 'origin' }> => ({
  kind: 'origin',
  timeoutMs,
  settings: {
    dedupeWindowSeconds: 30,
    missRenderLimit: 25,
    missWaitMs,
    retryAfterSeconds: 2,
    staleSharedMaxAge: 2,
    staleWhileRevalidateSeconds: 60,
    staleIfErrorSeconds: 86_400,
  },
});

/** Whether the cache key takes this tenant; any other error than a refusal is a failure. */
function cacheKeyAccepts(tenant: string): boolean {
  try {
    normaliseCacheKey({ rawPath: '/', tenant }, { allowedQueryParams: [] });
    return true;
  } catch (error) {
    if (error instanceof InvalidCacheKeyError) return false;
    throw error;
  }
}

const problems = (
  overrides: Partial<ServiceSettings>,
  functions: FunctionCheck[] = [],
  localMode = false,
) =>
  settingsProblems({ service: { ...service, ...overrides }, functions, localMode }, (key, kind) =>
    kind === undefined ? key : `${kind}.${key}`,
  );

describe('settings rules', () => {
  it('accept the defaults, with a body limit a function URL response can carry', () => {
    expect(problems({}, [worker(30_000), origin(30_000)])).toEqual([]);
    expect(SETTING_DEFAULTS.maxBodyBytes).toBe(4 * 1024 * 1024);
    expect(problems({ maxBodyBytes: MAX_BODY_BYTES + 1 })).toEqual([
      expect.stringMatching(/^maxBodyBytes must be an integer 1\.\.4194304/),
    ]);
  });

  it('refuse a lease no longer than the clock-skew margin', () => {
    expect(problems({ leaseSeconds: 2, renderTimeoutMs: 1_000 })).toEqual([
      expect.stringMatching(/^clockSkewMarginSeconds \(2 s\) must be below the lease/),
    ]);
    expect(problems({ leaseSeconds: 3, renderTimeoutMs: 1_000 })).toEqual([]);
  });

  it('refuse a render no shorter than the lease', () => {
    expect(problems({ leaseSeconds: 10 })).toEqual([
      expect.stringMatching(/^renderTimeoutMs \(10000 ms\) must be below the lease/),
    ]);
  });

  it('refuse a function timeout with no room for the render and its publish', () => {
    expect(problems({}, [worker(14_999)])).toEqual([
      expect.stringMatching(/^worker\.functionTimeoutMs \(14999 ms\).*renderTimeoutMs \+ 5000/),
    ]);
    expect(problems({}, [worker(15_000)])).toEqual([]);
    expect(problems({}, [worker(901_000)])[0]).toMatch(/1000\.\.900000/);
    // an unknown timeout (local mode, tests) is not checked
    expect(problems({}, [worker(undefined)])).toEqual([]);
  });

  it('make the origin timeout fit the wait for another holder too', () => {
    expect(problems({}, [origin(20_000, 20_000)])).toEqual([
      expect.stringMatching(/origin\.missWaitMs \+ 5000 ms = 25000 ms/),
    ]);
  });

  it('refuse a dedupe window SQS would outlast', () => {
    const fn = origin(30_000);
    const tooLong = { ...fn, settings: { ...fn.settings, dedupeWindowSeconds: 300 } } as const;
    expect(problems({}, [tooLong])).toEqual([expect.stringMatching(/SQS dedupe lasts 5 minutes/)]);
  });

  it('check a cross-field rule only between valid values', () => {
    expect(problems({ leaseSeconds: 1.5 })).toEqual([
      expect.stringMatching(/^leaseSeconds must be an integer >= 2, got 1\.5$/),
    ]);
  });

  describe('upstream URL', () => {
    it.each([
      'https://ssr.example.com',
      'http://localhost:3001',
      'http://127.0.0.1:8080/base',
      'http://127.9.8.7',
      'http://[::1]:3000',
    ])('accepts %s', (url) => {
      expect(problems({ renderOriginUrl: url })).toEqual([]);
    });

    it.each([
      ['http://ssr.internal.example.com', /must be https \(http only for localhost/],
      ['http://localhost.example.com', /must be https/],
      ['http://128.0.0.1', /must be https/],
      ['ftp://example.com', /must be https/],
      ['https://user:secret@ssr.example.com', /must not carry credentials/],
      ['not a url', /is not a URL/],
    ])('refuses %s', (url, message) => {
      expect(problems({ renderOriginUrl: url })).toEqual([expect.stringMatching(message)]);
    });

    it('allows plain http on any host in local mode only', () => {
      expect(problems({ renderOriginUrl: 'http://ssr:3001' }, [], true)).toEqual([]);
      expect(problems({ renderOriginUrl: 'http://ssr:3001' }, [], false)).toHaveLength(1);
    });

    it('knows the loopback hosts', () => {
      expect(['localhost', '127.0.0.1', '[::1]'].every(isLoopbackHost)).toBe(true);
      expect(['localhost.', '0.0.0.0', '[::]', 'example.com'].some(isLoopbackHost)).toBe(false);
    });
  });

  describe('tenants', () => {
    it('need multi-tenant mode and at least one name', () => {
      expect(problems({ tenants: ['acme'] })).toEqual([
        expect.stringMatching(/^tenants needs tenantHeader/),
      ]);
      expect(problems({ tenants: [], tenantHeader: 'x-tenant' })).toEqual([
        expect.stringMatching(/at least one tenant/),
      ]);
      expect(problems({ tenants: ['acme', 'globex.eu'], tenantHeader: 'x-tenant' })).toEqual([]);
    });

    it('use exactly the pattern the cache key accepts', () => {
      for (const tenant of [
        'acme',
        'a',
        'A-1.b_c',
        '-acme',
        'a#b',
        'a b',
        '',
        'x'.repeat(64),
        'x'.repeat(65),
      ]) {
        const keyAccepts = cacheKeyAccepts(tenant);
        expect(TENANT_PATTERN.test(tenant)).toBe(keyAccepts);
        const refused = problems({ tenants: [tenant], tenantHeader: 'x-tenant' }).length > 0;
        expect(refused).toBe(!keyAccepts);
      }
    });
  });

  describe('upstream secret', () => {
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf';

    it('needs an upstream and a plain header other than the tenant header', () => {
      const upstreamSecret = { arn, header: 'x-isr-origin-secret' };
      expect(problems({ upstreamSecret })).toEqual([
        expect.stringMatching(/upstreamSecretArn needs renderOriginUrl/),
      ]);
      const renderOriginUrl = 'https://ssr.example.com';
      expect(problems({ upstreamSecret, renderOriginUrl })).toEqual([]);
      expect(
        problems({ upstreamSecret: { arn, header: 'authorization' }, renderOriginUrl }),
      ).toHaveLength(1);
      expect(
        problems({
          upstreamSecret: { arn, header: 'x-tenant' },
          tenantHeader: 'x-tenant',
          renderOriginUrl,
        }),
      ).toEqual([expect.stringMatching(/must differ from the tenant header/)]);
      expect(
        problems({ upstreamSecret: { arn: 'secret-name', header: 'x-key' }, renderOriginUrl }),
      ).toEqual([expect.stringMatching(/must be a Secrets Manager secret ARN/)]);
    });
  });

  it('leave values known only at deploy to the cold start', () => {
    const token = '${Token[TOKEN.1]}';
    expect(
      settingsProblems(
        {
          service: {
            ...service,
            renderOriginUrl: token,
            upstreamSecret: { arn: token, header: 'x-key' },
          },
          functions: [],
          localMode: false,
          isDeployTime: (text) => text.includes('${Token'),
        },
        (key) => key,
      ),
    ).toEqual([]);
  });
});
