/**
 * The table machinery on a table made for the test: the kinds of setting the next features
 * bring (lists, structured values, presets), so they work before the first one lands.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  eachEntry,
  int,
  json,
  list,
  oneOf,
  text,
} from '../../../../lambda/core/settings/define.js';
import {
  readSettings,
  writeSettings,
  type SettingsTable,
} from '../../../../lambda/core/settings/engine.js';
import { listCodec } from '../../../../lambda/core/settings/spec.js';
import { localDefaults } from '../../../../lambda/shared/config.js';
import { awkwardText } from '../../../helpers/settings-arbitraries.js';

interface Variant {
  readonly header: string;
  readonly values: readonly string[];
}

/** A structured setting: each variant header with the values it may take. */
const parseVariants = (value: unknown): Variant[] => {
  const ok = (item: unknown): item is Variant =>
    typeof item === 'object' &&
    item !== null &&
    typeof (item as Variant).header === 'string' &&
    Array.isArray((item as Variant).values);
  if (Array.isArray(value) && value.every(ok)) return value;
  throw new Error('must be a list of { header, values }');
};

const TEST_TABLE: SettingsTable = {
  settings: {
    bypassCookies: list('T_BYPASS_COOKIES', 'prop', ['origin'], [], (item) => item.trim(), true, {
      check: eachEntry((name) => /^[^\s;=,]+$/.test(name), 'is not a cookie name'),
    }),
    staticPrefixes: list('T_STATIC', 'prop', ['origin', 'deploy'], [], (item) => item, false),
    variants: json('T_VARIANTS', 'prop', ['origin'], [] as Variant[], parseVariants),
    passTimeoutMs: int('T_PASS_TIMEOUT_MS', 'prop', ['origin'], 10_000, 1, 60_000),
    passBodyMaxBytes: int('T_PASS_BODY', 'env', ['origin'], 1_000, 0, undefined, { local: 5 }),
    upstream: text('T_UPSTREAM', 'prop', ['origin', 'worker'], undefined),
    upstreamKey: text('T_UPSTREAM_KEY', 'ref', ['origin'], undefined, {
      requires: { upstream: '' },
    }),
    preset: oneOf('T_PRESET', 'prop', ['origin', 'worker', 'local'], ['framework'], undefined),
  },
  presets: {
    framework: {
      bypassCookies: ['__draft'],
      staticPrefixes: ['/_fw/static/'],
      variants: [{ header: 'rsc', values: ['1'] }],
      passBodyMaxBytes: 2_000,
    },
  },
  rules: [
    {
      keys: ['passTimeoutMs', 'upstream'],
      check: (values, nameOf) =>
        values.upstream === undefined && values.passTimeoutMs !== 10_000
          ? [`${nameOf('passTimeoutMs')} needs an upstream to pass to`]
          : [],
    },
  ],
};

const read = (env: Record<string, string>, reader: 'origin' | 'worker' = 'origin') =>
  readSettings(TEST_TABLE, reader, env, { nameOf: (key) => key });
const roundTrip = (inputs: Record<string, unknown>) => read(writeSettings(TEST_TABLE, inputs));

describe('settings engine', () => {
  it('round-trips any list, whatever its items hold', () => {
    const codec = listCodec((item) => item, false);
    fc.assert(
      fc.property(fc.array(fc.oneof(awkwardText, fc.string({ unit: 'binary' }))), (items) => {
        expect(codec.decode(codec.encode(items))).toEqual(items);
      }),
    );
  });

  it('reads a list written by hand, comma-separated, as well as JSON', () => {
    expect(read({ T_BYPASS_COOKIES: ' b, a ,,a' }).values.bypassCookies).toEqual(['a', 'b']);
    expect(read({ T_BYPASS_COOKIES: '["x,y"]' }).problems).toEqual([
      'bypassCookies entry "x,y" is not a cookie name',
    ]);
    expect(read({ T_STATIC: '["/a,b/"]' }).values.staticPrefixes).toEqual(['/a,b/']);
    expect(read({ T_STATIC: '[1]' }).problems).toEqual([
      'staticPrefixes must be a JSON array of strings',
    ]);
    expect(read({ T_STATIC: '' }).values.staticPrefixes).toEqual([]);
  });

  it('round-trips a structured value, and refuses a malformed one in the same words', () => {
    const variants = [{ header: 'next-router-prefetch', values: ['1', "a,b 'c'"] }];
    expect(roundTrip({ variants }).values.variants).toEqual(variants);
    expect(read({ T_VARIANTS: '{"header":"x"}' }).problems).toEqual([
      'variants must be a list of { header, values }',
    ]);
    expect(read({ T_VARIANTS: 'rsc' }).problems).toEqual(['variants must be JSON, got "rsc"']);
  });

  it('takes a preset for defaults, and lets a given value win', () => {
    const framework = roundTrip({ preset: 'framework' }).values;
    expect(framework).toMatchObject({
      bypassCookies: ['__draft'],
      staticPrefixes: ['/_fw/static/'],
      variants: [{ header: 'rsc', values: ['1'] }],
      passBodyMaxBytes: 2_000,
    });
    const overridden = roundTrip({ preset: 'framework', bypassCookies: ['mine'] }).values;
    expect(overridden.bypassCookies).toEqual(['mine']);
    expect(roundTrip({}).values.bypassCookies).toEqual([]);
    // an environment-only setting takes the preset at cold start from the preset's name alone
    expect(writeSettings(TEST_TABLE, { preset: 'framework' })).not.toHaveProperty('T_PASS_BODY');
  });

  it('refuses an unknown preset, and never reads one from the prototype', () => {
    expect(read({ T_PRESET: 'constructor' }).problems).toEqual([
      'preset must be one of framework, got "constructor"',
    ]);
    expect(read({ T_PRESET: 'constructor' }).values.passBodyMaxBytes).toBe(1_000);
  });

  it("applies npm start's defaults below a preset's", () => {
    expect(localDefaults({}, TEST_TABLE)).toEqual({ T_PASS_BODY: '5' });
    expect(localDefaults({ T_PRESET: 'framework' }, TEST_TABLE)).toEqual({});
    expect(localDefaults({ T_PASS_BODY: '9' }, TEST_TABLE)).toEqual({});
  });

  it('refuses a setting given without one it needs, and writes no default that would be', () => {
    expect(roundTrip({ upstreamKey: 'k' }).problems).toEqual(['upstreamKey needs upstream']);
    expect(roundTrip({ upstreamKey: 'k', upstream: 'https://u' }).problems).toEqual([]);
  });

  it('runs a rule only between valid values, for the readers it names', () => {
    expect(roundTrip({ passTimeoutMs: 5_000 }).problems).toEqual([
      'passTimeoutMs needs an upstream to pass to',
    ]);
    expect(roundTrip({ passTimeoutMs: 0.5 }).problems).toEqual([
      'passTimeoutMs must be an integer 1..60000, got 0.5',
    ]);
  });

  it('gives each reader only what it reads', () => {
    const env = writeSettings(TEST_TABLE, { preset: 'framework', upstream: 'https://u' });
    expect(Object.keys(read(env, 'worker').values).sort()).toEqual(['preset', 'upstream']);
  });

  it('never judges text known only at deploy, yet reads it as given', () => {
    const token = '${Token[TOKEN.7]}';
    const reading = readSettings(
      TEST_TABLE,
      'origin',
      { T_UPSTREAM_KEY: token, T_PASS_TIMEOUT_MS: token },
      { nameOf: (key) => key, isDeployTime: (value) => value.includes('${Token') },
    );
    expect(reading.problems).toEqual(['upstreamKey needs upstream']);
  });
});
