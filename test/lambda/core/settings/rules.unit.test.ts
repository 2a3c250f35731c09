import { describe, expect, it } from '@jest/globals';
import { InvalidCacheKeyError } from '../../../../lambda/core/errors.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import { TENANT_PATTERN } from '../../../../lambda/core/page/rows.js';
import {
  isLoopbackHost,
  MAX_BODY_BYTES,
  readSettings,
  SETTING_DEFAULTS,
  TABLE,
  writeSettings,
  type Reader,
} from '../../../../lambda/core/settings/index.js';

/** The resources every function is told about. */
const REFS = {
  FACETHEORY_CACHE_TABLE_NAME: 'cache',
  ISR_BODY_BUCKET: 'bodies',
  ISR_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/1/q.fifo',
  ISR_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/1/d.fifo',
};

/** The problems `reader` finds in the environment the construct would write for `inputs`. */
const problems = (inputs: Record<string, unknown>, reader: Reader = 'origin') =>
  readSettings(TABLE, reader, { ...writeSettings(TABLE, inputs), ...REFS }, { nameOf: (k) => k })
    .problems;

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

describe('settings rules', () => {
  it('accept the defaults, with a body limit a function URL response can carry', () => {
    for (const reader of ['origin', 'worker', 'revalidate', 'sweeper'] as const) {
      expect(problems({ functionTimeoutMs: 30_000 }, reader)).toEqual([]);
    }
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
    expect(problems({ functionTimeoutMs: 14_999 }, 'worker')).toEqual([
      expect.stringMatching(/^functionTimeoutMs \(14999 ms\).*renderTimeoutMs \+ 5000/),
    ]);
    expect(problems({ functionTimeoutMs: 15_000 }, 'worker')).toEqual([]);
    expect(problems({ functionTimeoutMs: 901_000 }, 'worker')[0]).toMatch(/1000\.\.900000/);
    // an unknown timeout (local mode, tests) is not checked
    expect(problems({}, 'worker')).toEqual([]);
    // the revalidate function and the sweeper never render
    expect(problems({ functionTimeoutMs: 1_000 }, 'revalidate')).toEqual([]);
    expect(problems({ functionTimeoutMs: 1_000 }, 'sweeper')).toEqual([]);
  });

  it('make the origin timeout fit the wait for another holder too', () => {
    expect(problems({ functionTimeoutMs: 20_000, missWaitMs: 20_000 })).toEqual([
      expect.stringMatching(/missWaitMs \+ 5000 ms = 25000 ms/),
    ]);
  });

  it('refuse a dedupe window SQS would outlast', () => {
    expect(problems({ dedupeWindowSeconds: 300 })).toEqual([
      expect.stringMatching(/SQS dedupe lasts 5 minutes/),
    ]);
  });

  it('check a cross-field rule only between valid values', () => {
    expect(problems({ leaseSeconds: 1.5 })).toEqual([
      expect.stringMatching(/^leaseSeconds must be an integer >= 2, got 1\.5$/),
    ]);
  });

  it('refuse an orphan age a render could still publish within (sweeper)', () => {
    expect(problems({ orphanAgeSeconds: 930 }, 'sweeper')).toEqual([
      expect.stringMatching(/^orphanAgeSeconds \(930 s\) must exceed .* 930 s$/),
    ]);
    expect(problems({ orphanAgeSeconds: 931 }, 'sweeper')).toEqual([]);
  });

  it('refuse an overload fallback the origin could not serve, naming the value', () => {
    expect(problems({ overloadFallbackPath: 'busy' })).toEqual([
      'overloadFallbackPath must be a path starting with "/", got busy',
    ]);
    expect(problems({ overloadFallbackPath: '/busy' })).toEqual([]);
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
      expect(problems({ renderOriginUrl: 'http://ssr:3001', localMode: true })).toEqual([]);
      expect(problems({ renderOriginUrl: 'http://ssr:3001', localMode: false })).toHaveLength(1);
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
    const renderOriginUrl = 'https://ssr.example.com';

    it('needs an upstream and a plain header other than the tenant header', () => {
      expect(problems({ upstreamSecretArn: arn })).toEqual([
        expect.stringMatching(/upstreamSecretArn needs renderOriginUrl/),
      ]);
      expect(problems({ upstreamSecretArn: arn, renderOriginUrl })).toEqual([]);
      expect(
        problems({
          upstreamSecretArn: arn,
          upstreamSecretHeader: 'authorization',
          renderOriginUrl,
        }),
      ).toHaveLength(1);
      expect(
        problems({
          upstreamSecretArn: arn,
          upstreamSecretHeader: 'x-tenant',
          tenantHeader: 'x-tenant',
          renderOriginUrl,
        }),
      ).toEqual([expect.stringMatching(/must differ from the tenant header/)]);
      expect(problems({ upstreamSecretArn: 'secret-name', renderOriginUrl })).toEqual([
        expect.stringMatching(/must be a Secrets Manager secret ARN/),
      ]);
    });

    it('is told to the functions that call the upstream only', () => {
      const env = { ...writeSettings(TABLE, { upstreamSecretArn: arn }), ...REFS };
      const read = (reader: Reader) =>
        readSettings(TABLE, reader, env, { nameOf: (k) => k }).values.upstreamSecretArn;
      expect([read('origin'), read('worker')]).toEqual([arn, arn]);
      expect([read('revalidate'), read('sweeper')]).toEqual([undefined, undefined]);
    });
  });

  it('leave values known only at deploy to the cold start', () => {
    const token = '${Token[TOKEN.1]}';
    const env = {
      ...writeSettings(TABLE, { renderOriginUrl: token, upstreamSecretArn: token }),
      ...REFS,
      ISR_LEASE_SECONDS: token,
    };
    const reading = readSettings(TABLE, 'origin', env, {
      nameOf: (key) => key,
      isDeployTime: (text) => text.includes('${Token'),
    });
    expect(reading.problems).toEqual([]);
  });
});
