/**
 * fast-check arbitraries for every construct prop, drawn from the settings tables: a setting
 * added to a table is drawn with no change here. Strings mix commas, quotes, spaces, brackets and
 * non-ASCII text with values a reader accepts, so both verdicts come up often.
 */
import { Duration } from 'aws-cdk-lib';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import fc from 'fast-check';
import { ANY, SETTINGS } from '../../lambda/core/settings/index.js';
import { DEPLOY_SETTINGS } from '../../lib/isr-deploy-settings.js';
import { NEXT_IMAGE_RULE, NEXT_VARIANT_HEADERS } from '../../lambda/core/settings/presets.js';

/** Text that breaks naive encodings: separators, quotes, spaces, brackets, non-ASCII. */
export const awkwardText = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    '/',
    ',',
    '"',
    "'",
    ' ',
    'é',
    '😀',
    '\\',
    '*',
    '-',
    '[',
    ']',
    '.',
  ),
  maxLength: 8,
});

/** Values each setting accepts, commas, quotes and spaces included where it allows them. */
const VALID: Readonly<Record<string, readonly string[]>> = {
  renderOriginUrl: ['https://ssr.example.com', 'http://localhost:3001', 'http://[::1]:3001'],
  allowedQueryParams: ['page', 'lang', 'q"x', 'é', "it's"],
  renderPaths: ['/blog/*', '/docs/**', '/tags/a,b', "/q/'x'", '/', '/a;b=c'],
  keptHeaders: ['link', 'x-custom-*', 'X-Robots-Tag'],
  bodyKeyPrefix: ['pages/', 'site/a/', "it's/"],
  tenants: ['acme', 'globex.eu', 'A-1'],
  deployId: ['v1', 'release 1, "b"', 'café – ☕', ' padded '],
  overloadFallbackPath: ['/busy', '/a,b', ' /x "y" '],
  tenantHeader: ['x-tenant', 'X-Site'],
  cacheTagHeader: ['x-isr-cache-tags', 'X-Tags'],
  upstreamTagHeader: ['cache-tag', 'Surrogate-Key'],
  upstreamSecretHeader: ['x-isr-origin-secret', 'X-Origin-Key'],
  staticPrefixes: ['/_next/static/', '/_astro/', "/it's/"],
  bypassPaths: ['/api/**', '/account', '/**.json'],
  bypassCookies: ['__prerender_bypass', 'draft', "it's"],
  bypassHeaders: ['x-preview', 'X-Draft'],
  ignoredQueryParams: ['_rsc', 'utm_source'],
  publicOrigin: ['https://www.example.com', 'http://localhost:3000'],
};

/** Values worth drawing per setting: some accepted, some refused for a reason of their own. */
const AWKWARD: Readonly<Record<string, readonly string[]>> = {
  renderOriginUrl: [
    'http://ssr.internal',
    'ftp://x.example',
    'https://u:p@x.example',
    'https://ssr.example.com/a,b "q"',
    'nonsense',
  ],
  allowedQueryParams: ['a b', 'a,b', ''],
  renderPaths: ['b', '/a b', ''],
  keptHeaders: ['Set-Cookie', 'bad header', ''],
  bodyKeyPrefix: ['bad', '/x/'],
  tenants: ['a#b', '-x', 'a,b', 'Acme'],
  deployId: ['x'.repeat(129), ''],
  overloadFallbackPath: ['busy', 'a,/b'],
  staticPrefixes: ['/', '/_isr/', '/_', 'x/', '/a*/', '/a b/'],
  bypassPaths: ['/*', '/**', '/_isr/x', '/a b', 'api/**', '/***'],
  bypassCookies: ['a b', 'a;b', 'a=b', ''],
  bypassHeaders: ['cookie', 'x-isr-x', 'x-prerender-revalidate', 'host', 'bad header'],
};
const AWKWARD_HEADERS = ['host', 'bad header', 'x,y', 'Authorization'];

/** An integer near the bounds, a fraction, or NaN. */
function integerNear(min: number, max: number, fallback: number | undefined) {
  const near = [min - 1, min, min + 1, fallback ?? min, max, max + 1, min + 0.5, Number.NaN];
  return fc.oneof(
    fc.constantFrom(...near.filter((value) => max !== ANY || value < ANY)),
    fc.integer({ min: min - 2, max: Math.min(max, min + 40_000) }),
  );
}

/** An integer from the default up to about twice it: within bounds, and mostly within the rules. */
const integerFrom = (min: number, max: number, fallback: number | undefined) => {
  const from = fallback ?? min;
  return fc.integer({ min: from, max: Math.min(max, from * 2 + 1) });
};

type Spec = (typeof SETTINGS)[keyof typeof SETTINGS];
export type Draw = 'valid' | 'awkward';

/** Variant rules: the Next.js ones, a closed set, and (awkward) rules no value fits. */
const VARIANT_RULES = {
  valid: [[], [{ name: 'x-variant', values: ['a', 'b'] }], NEXT_VARIANT_HEADERS],
  awkward: [
    [{ name: 'cookie', values: ['1'] }],
    [{ name: 'x-v' }],
    'rsc',
    [{ name: 'x-v', charset: ']' }],
  ],
};

/** Key rules: the Next.js image one, and (awkward) ones the check refuses. */
const KEY_RULES = {
  valid: [[], [NEXT_IMAGE_RULE]],
  awkward: [[{ path: 'x', params: [] }], [{ path: '/x', params: [{ name: 'w', kind: 'int' }] }]],
};

/** Tenant origins need the tenant header: valid draws leave them to `tenantsByHost`. */
const TENANT_ORIGINS = {
  valid: [undefined],
  awkward: [{ acme: 'https://acme.example/app' }, { '-x': 'https://x.example' }, ['x']],
};

function arbitraryFor(key: string, spec: Spec, draw: Draw): fc.Arbitrary<unknown> {
  if (key === 'tenantOrigins') {
    return fc.constantFrom(
      ...(draw === 'valid'
        ? TENANT_ORIGINS.valid
        : [...TENANT_ORIGINS.valid, ...TENANT_ORIGINS.awkward]),
    );
  }
  if (key === 'keyRules') {
    const rules = draw === 'valid' ? KEY_RULES.valid : [...KEY_RULES.valid, ...KEY_RULES.awkward];
    return fc.constantFrom(...rules);
  }
  if (key === 'variantHeaders') {
    const rules =
      draw === 'valid' ? VARIANT_RULES.valid : [...VARIANT_RULES.valid, ...VARIANT_RULES.awkward];
    return fc.constantFrom(...rules);
  }
  // A preset names the upstream's routing, which needs renderOriginUrl: drawn as awkward only.
  if (key === 'preset' && draw === 'valid') return fc.constant(undefined);
  const valid = VALID[key] ?? [];
  const awkward = [...(AWKWARD[key] ?? []), ...(key.endsWith('Header') ? AWKWARD_HEADERS : [])];
  const item =
    draw === 'valid'
      ? fc.constantFrom(...(valid.length > 0 ? valid : ['v']))
      : fc.oneof(fc.constantFrom(...valid, ...awkward, 'v'), awkwardText);
  if (spec.min !== undefined) {
    const bounds = [spec.min, spec.max ?? ANY, spec.default as number | undefined] as const;
    return draw === 'valid' ? integerFrom(...bounds) : integerNear(...bounds);
  }
  if ('values' in spec && spec.values !== undefined) {
    if (draw === 'valid')
      return spec.values.length > 0 ? fc.constantFrom(...spec.values) : fc.constant(undefined);
    return fc.constantFrom(...spec.values, 'other', ' Strip ', '');
  }
  if (spec.codec.blankIsEmpty === true) {
    return fc.array(item, {
      minLength: draw === 'valid' && key === 'tenants' ? 1 : 0,
      maxLength: 3,
    });
  }
  return item;
}

/** One arbitrary per prop of the settings table and of the deploy table (numbers). */
export function propArbitraries(draw: Draw): Record<string, fc.Arbitrary<unknown>> {
  const arbitraries: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, spec] of Object.entries(SETTINGS)) {
    if (spec.source === 'prop') arbitraries[key] = arbitraryFor(key, spec, draw);
  }
  for (const [key, spec] of Object.entries(DEPLOY_SETTINGS)) {
    const fallback = spec.default;
    // Numbers only: the durations are drawn below, and text settings (a secret's version) are not.
    if (typeof fallback !== 'number' && !(fallback === undefined && 'min' in spec)) continue;
    const bounds = [spec.min ?? 0, spec.max ?? ANY, fallback] as const;
    arbitraries[key] = draw === 'valid' ? integerFrom(...bounds) : integerNear(...bounds);
  }
  const seconds = fc
    .integer(draw === 'valid' ? { min: 30, max: 70 } : { min: 0, max: 70 })
    .map((value) => Duration.seconds(value));
  arbitraries.workerTimeout = seconds;
  arbitraries.originTimeout = seconds;
  return arbitraries;
}

/** The props that name resources whose ARNs reach the functions, and the edge's tenant table. */
export function secretArbitraries(
  secret: ISecret,
  draw: Draw,
): Record<string, fc.Arbitrary<unknown>> {
  const tenants = draw === 'valid' ? VALID.tenants : [...VALID.tenants, ...AWKWARD.tenants];
  return {
    upstreamSecret: fc.constant(secret),
    revalidateWebhookSecret: fc.constant(secret),
    tenantsByHost: fc.dictionary(
      fc.constantFrom('a.example', 'b.example'),
      fc.constantFrom(...tenants),
    ),
  };
}

/**
 * Props mostly valid, with up to two drawn to break things: about half the draws are accepted,
 * so agreement on values is checked as often as agreement on problems.
 */
export function mostlyValidProps(secret: ISecret): fc.Arbitrary<Record<string, unknown>> {
  const arbitraries = { ...propArbitraries('valid'), ...secretArbitraries(secret, 'valid') };
  const valid = fc.record(arbitraries, { requiredKeys: [] });
  const awkward = propArbitraries('awkward');
  const keys = Object.keys(awkward);
  return fc
    .tuple(valid, fc.subarray(keys, { maxLength: 2 }), fc.record(awkward))
    .map(([props, broken, drawn]) => ({
      ...props,
      ...Object.fromEntries(broken.map((key) => [key, drawn[key]])),
    }));
}
