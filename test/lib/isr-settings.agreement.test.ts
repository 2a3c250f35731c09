/**
 * Synth and cold start judge the same settings the same way: what `cdk synth` accepts, both
 * functions (and the revalidate function) start with; what it refuses, they would refuse. Both sides apply
 * `lambda/core/settings.ts`; the construct hands the functions `functionEnvironment(...)`.
 */
import { describe, expect, it } from '@jest/globals';
import { Duration, Stack } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import fc from 'fast-check';
import { MAX_BODY_BYTES } from '../../lambda/core/settings.js';
import {
  loadOriginConfig,
  loadRevalidateConfig,
  loadWorkerConfig,
} from '../../lambda/shared/config.js';
import { functionEnvironment } from '../../lib/isr-functions.js';
import type { IsrServiceProps } from '../../lib/isr-service-props.js';
import { applyDefaults, resolveSettings } from '../../lib/isr-settings.js';

const refs = {
  tableName: 'isr-cache',
  bucketName: 'isr-bodies',
  queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr.fifo',
  deadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-dlq.fifo',
};
const secret = Secret.fromSecretCompleteArn(
  new Stack(),
  'Upstream',
  'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf',
);

const accepts = (run: () => unknown): boolean => {
  try {
    run();
    return true;
  } catch {
    return false;
  }
};

/** Whether synth accepts the props, and whether both cold starts accept what it would pass. */
function verdicts(props: IsrServiceProps) {
  const settings = applyDefaults(props);
  const origin = accepts(() => loadOriginConfig(functionEnvironment('origin', settings, refs)));
  const worker = accepts(() => loadWorkerConfig(functionEnvironment('worker', settings, refs)));
  const revalidate = accepts(() =>
    loadRevalidateConfig(functionEnvironment('revalidate', settings, refs)),
  );
  return {
    synth: accepts(() => resolveSettings(props)),
    coldStart: origin && worker && revalidate,
  };
}

const https = 'https://ssr.example.com';

describe('settings: synth and cold start agree', () => {
  it.each<[string, IsrServiceProps]>([
    [
      'a lease no longer than the default clock-skew margin',
      { leaseSeconds: 2, renderTimeoutMs: 1_000 },
    ],
    ['a clock-skew margin as long as the lease', { clockSkewMarginSeconds: 30 }],
    ['a render as long as the lease', { leaseSeconds: 10 }],
    ['a body a function URL response cannot carry', { maxBodyBytes: 5 * 1024 * 1024 }],
    ['a worker timeout without room to publish', { workerTimeout: Duration.seconds(14) }],
    ['an origin timeout without room to publish', { originTimeout: Duration.seconds(12) }],
    ['a plain-http upstream', { renderOriginUrl: 'http://ssr.internal.example.com' }],
    ['an ftp upstream', { renderOriginUrl: 'ftp://example.com' }],
    ['credentials in the upstream URL', { renderOriginUrl: 'https://u:p@ssr.example.com' }],
    ['tenants without multi-tenant mode', { tenants: ['acme'] }],
    ['a tenant the cache key refuses', { tenantHeader: 'x-tenant', tenants: ['a#b'] }],
    ['an empty tenant list', { tenantHeader: 'x-tenant', tenants: [] }],
    ['Host as tenant header', { tenantHeader: 'Host' }],
    ['an upstream secret without an upstream', { upstreamSecret: secret }],
    [
      'the secret in the Authorization header',
      { renderOriginUrl: https, upstreamSecret: secret, upstreamSecretHeader: 'Authorization' },
    ],
    ['no freshness', { revalidateSeconds: 0 }],
    ['a fractional lease', { leaseSeconds: 30.5 }],
    ['a deploy ID over 128 characters', { deployId: 'x'.repeat(129) }],
    ['a query parameter with a space', { allowedQueryParams: ['a b'] }],
  ])('both refuse %s', (_what, props) => {
    expect(verdicts(props)).toEqual({ synth: false, coldStart: false });
  });

  it.each<[string, IsrServiceProps]>([
    ['the defaults', {}],
    ['the shortest lease the margin allows', { leaseSeconds: 3, renderTimeoutMs: 2_999 }],
    [
      'a two-second lease with a smaller margin',
      { leaseSeconds: 2, clockSkewMarginSeconds: 1, renderTimeoutMs: 1_500 },
    ],
    ['the largest body', { maxBodyBytes: MAX_BODY_BYTES }],
    ['a worker timeout of exactly render + publish', { workerTimeout: Duration.seconds(15) }],
    ['a loopback upstream over http', { renderOriginUrl: 'http://localhost:3001' }],
    ['an IPv6 loopback upstream', { renderOriginUrl: 'http://[::1]:3001' }],
    ['an https upstream with its secret', { renderOriginUrl: https, upstreamSecret: secret }],
    ['a tenant allow-list', { tenantHeader: 'X-Tenant', tenants: ['acme', 'globex.eu'] }],
  ])('both accept %s', (_what, props) => {
    expect(verdicts(props)).toEqual({ synth: true, coldStart: true });
  });

  it('agree on random settings (synth accepts exactly when both cold starts do)', () => {
    const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
    const seconds = fc.integer({ min: 0, max: 70 }).map((value) => Duration.seconds(value));
    const props = fc.record(
      {
        leaseSeconds: maybe(fc.oneof(fc.integer({ min: -1, max: 40 }), fc.constant(2.5))),
        clockSkewMarginSeconds: maybe(fc.integer({ min: -1, max: 40 })),
        renderTimeoutMs: maybe(fc.integer({ min: 0, max: 45_000 })),
        revalidateSeconds: maybe(fc.integer({ min: -1, max: 120 })),
        maxBodyBytes: maybe(fc.constantFrom(0, 1, MAX_BODY_BYTES, MAX_BODY_BYTES + 1)),
        workerTimeout: maybe(seconds),
        originTimeout: maybe(seconds),
        renderOriginUrl: maybe(
          fc.constantFrom(
            https,
            'http://localhost:3001',
            'http://127.0.0.1',
            'http://ssr.internal',
            'ftp://x.example',
            'https://u:p@x.example',
            'nonsense',
          ),
        ),
        tenantHeader: maybe(fc.constantFrom('x-tenant', 'X-Site', 'host', 'bad header')),
        tenants: maybe(
          fc.array(fc.constantFrom('acme', 'globex.eu', 'a#b', '-x'), { maxLength: 3 }),
        ),
        deployId: maybe(fc.constantFrom('', 'v1', 'x'.repeat(128), 'x'.repeat(129))),
        upstream: maybe(fc.constantFrom('x-origin-key', 'X-Tenant', 'authorization')),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(props, ({ upstream, ...rest }) => {
        const withSecret: IsrServiceProps =
          upstream === undefined
            ? rest
            : { ...rest, upstreamSecret: secret, upstreamSecretHeader: upstream };
        const { synth, coldStart } = verdicts(withSecret);
        expect(synth).toBe(coldStart);
      }),
      { numRuns: 400 },
    );
  });
});
