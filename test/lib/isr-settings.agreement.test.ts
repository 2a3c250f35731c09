/**
 * Synth and cold start judge the same settings the same way: what `cdk synth` refuses, some
 * function's cold start refuses, in the same words (props named for variables); what it accepts,
 * every function starts with, reading back exactly the values synth resolved. Both sides read the
 * settings table; the construct hands each function `functionEnvironment(...)`.
 */
import { describe, expect, it } from '@jest/globals';
import { Duration, Stack } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import fc from 'fast-check';
import { ConfigError } from '../../lambda/core/errors.js';
import {
  FUNCTION_KINDS,
  MAX_BODY_BYTES,
  SETTINGS,
  type FunctionKind,
} from '../../lambda/core/settings/index.js';
import {
  loadOriginConfig,
  loadRevalidateConfig,
  loadSweeperConfig,
  loadPurgerConfig,
  loadWorkerConfig,
} from '../../lambda/shared/config.js';
import { functionEnvironment } from '../../lib/isr-functions.js';
import type { IsrServiceProps } from '../../lib/isr-service-props.js';
import {
  applyDefaults,
  lambdaProblems,
  propNameOf,
  resolveSettings,
  type IsrSettings,
} from '../../lib/isr-settings.js';
import {
  mostlyValidProps,
  propArbitraries,
  secretArbitraries,
} from '../helpers/settings-arbitraries.js';

const refs = {
  tableName: 'isr-cache',
  bucketName: 'isr-bodies',
  queueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr.fifo',
  deadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-dlq.fifo',
  purgeQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-purge',
  purgeDeadLetterQueueUrl: 'https://sqs.us-east-1.amazonaws.com/123456789012/isr-purge-dlq',
};
const secret = Secret.fromSecretCompleteArn(
  new Stack(),
  'Upstream',
  'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf',
);

const LOADERS = {
  origin: loadOriginConfig,
  worker: loadWorkerConfig,
  revalidate: loadRevalidateConfig,
  sweeper: loadSweeperConfig,
  purger: loadPurgerConfig,
} as const;

const ENTRIES = Object.entries(SETTINGS);

/** A cold start's message in the construct's words: each variable named by its prop. */
function inPropWords(kind: FunctionKind, problem: string): string {
  const propOf = new Map(ENTRIES.map(([key, spec]) => [spec.env, propNameOf(kind)(key)]));
  return problem.replace(/\b[A-Z][A-Z0-9_]*[A-Z0-9]\b/g, (name) => propOf.get(name) ?? name);
}

interface ColdStart {
  readonly problems: string[];
  readonly settings?: Record<string, unknown>;
}

type Env = Record<string, string>;
/** What happens to the environment between synth and the cold start: nothing, but for controls. */
type Transit = (env: Env) => Env;
const untouched: Transit = (env) => env;

/** What `kind`'s cold start makes of the environment synth gives it. */
function coldStart(kind: FunctionKind, settings: IsrSettings, transit: Transit): ColdStart {
  try {
    const config = LOADERS[kind](transit(functionEnvironment(kind, settings, refs)));
    return { problems: [], settings: config.settings };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const [, ...lines] = error.message.split('\n');
    return { problems: lines.map((line) => inPropWords(kind, line.trim())) };
  }
}

/** Synth's problems (the Lambdas' rules) and every cold start's, each once. */
function verdicts(props: IsrServiceProps, transit = untouched) {
  const settings = applyDefaults(props);
  const starts = FUNCTION_KINDS.map((kind) => [kind, coldStart(kind, settings, transit)] as const);
  const sorted = (problems: Iterable<string>) => [...new Set(problems)].sort();
  return {
    settings,
    starts,
    synth: sorted(lambdaProblems(settings)),
    coldStart: sorted(starts.flatMap(([, start]) => start.problems)),
  };
}

/**
 * Synth and every cold start agree: the same problems, and the same values where all accept.
 * Says whether all accepted.
 */
function expectAgreement(props: IsrServiceProps, transit = untouched): boolean {
  const { settings, starts, synth, coldStart: cold } = verdicts(props, transit);
  expect(synth).toEqual(cold);
  if (synth.length > 0) return false;
  for (const [kind, start] of starts) {
    for (const [key, spec] of ENTRIES) {
      if (!spec.readers.includes(kind) || spec.source === 'ref' || spec.source === 'env') continue;
      expect([kind, key, start.settings?.[key]]).toEqual([
        kind,
        key,
        (settings as unknown as Record<string, unknown>)[key],
      ]);
    }
  }
  return true;
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
    ['tenants equal but for case', { tenantHeader: 'x-tenant', tenants: ['Acme', 'acme'] }],
    [
      'a host table whose tenants are equal but for case',
      { tenantHeader: 'x-tenant', tenantsByHost: { 'a.example': 'Acme', 'b.example': 'acme' } },
    ],
    ['Host as tenant header', { tenantHeader: 'Host' }],
    ['an upstream secret without an upstream', { upstreamSecret: secret }],
    ['a secret header without a secret', { upstreamSecretHeader: 'x-origin-key' }],
    [
      'the secret in the Authorization header',
      { renderOriginUrl: https, upstreamSecret: secret, upstreamSecretHeader: 'Authorization' },
    ],
    ['no freshness', { revalidateSeconds: 0 }],
    ['a fractional lease', { leaseSeconds: 30.5 }],
    ['a deploy ID over 128 characters', { deployId: 'x'.repeat(129) }],
    ['a query parameter with a space', { allowedQueryParams: ['a b'] }],
    ['a query parameter with a comma', { allowedQueryParams: ['a,b'] }],
    ['an empty query parameter', { allowedQueryParams: [''] }],
    ['an overload fallback that is not a path', { overloadFallbackPath: 'busy' }],
  ])('both refuse %s, in the same words', (_what, props) => {
    const { synth, coldStart: cold } = verdicts(props);
    expect(synth).not.toEqual([]);
    expect(synth).toEqual(cold);
    expect(() => resolveSettings(props)).toThrow();
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
    ['a render path with a comma', { renderPaths: ['/tags/a,b', "/q/'x'", '/a;b=c'] }],
    ['a deploy id with spaces, quotes and commas', { deployId: 'r 1, "two" – café' }],
  ])('both accept %s, and read back what synth resolved', (_what, props) => {
    expect(verdicts(props).synth).toEqual([]);
    expect(() => resolveSettings(props)).not.toThrow();
    expectAgreement(props);
  });

  it('reads a render path with a comma back whole in every function (issue 19, item 11)', () => {
    const { starts } = verdicts({ renderPaths: ['/tags/a,b'] });
    for (const [, start] of starts.filter(([kind]) =>
      SETTINGS.renderPaths.readers.includes(kind),
    )) {
      expect(start.settings?.renderPaths).toEqual(['/tags/a,b']);
    }
  });

  it('refuses an overload fallback at synth in the words the origin uses (issue 19, item 11)', () => {
    expect(() => resolveSettings({ overloadFallbackPath: 'busy' })).toThrow(
      'overloadFallbackPath must be a path starting with "/", got busy',
    );
    const { starts } = verdicts({ overloadFallbackPath: 'busy' });
    expect(Object.fromEntries(starts)).toMatchObject({
      origin: { problems: ['overloadFallbackPath must be a path starting with "/", got busy'] },
    });
  });

  it('agree on props drawn at random, strings with commas, quotes and spaces included', () => {
    let accepted = 0;
    fc.assert(
      fc.property(mostlyValidProps(secret), (drawn) => {
        if (expectAgreement(drawn)) accepted += 1;
      }),
      { numRuns: 300 },
    );
    // Values are compared only where every function starts: make sure that is often.
    expect(accepted).toBeGreaterThan(60);
  });

  it('catch a list encoding that loses commas, and a setting synth checks but never writes (negative controls)', () => {
    const commaJoined: Transit = (env) =>
      Object.fromEntries(
        Object.entries(env).map(([name, text]) => [
          name,
          text.startsWith('[') ? (JSON.parse(text) as string[]).join(',') : text,
        ]),
      );
    const unwritten: Transit = ({ ISR_OVERLOAD_FALLBACK_PATH: _dropped, ...env }) => env;
    expect(() => expectAgreement({ renderPaths: ['/tags/a,b'] }, commaJoined)).toThrow();
    expect(() => expectAgreement({ overloadFallbackPath: 'busy' }, unwritten)).toThrow();
    for (const transit of [commaJoined, unwritten]) {
      const property = fc.property(mostlyValidProps(secret), (drawn) => {
        expectAgreement(drawn, transit);
      });
      expect(() => fc.assert(property, { numRuns: 300 })).toThrow();
    }
  });

  it('agree on props drawn to break every reader at once', () => {
    const awkward = { ...propArbitraries('awkward'), ...secretArbitraries(secret, 'awkward') };
    fc.assert(
      fc.property(fc.record(awkward, { requiredKeys: [] }), (drawn) => {
        expectAgreement(drawn);
      }),
      { numRuns: 200 },
    );
  });
});
