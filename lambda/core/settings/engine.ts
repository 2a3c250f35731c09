/**
 * Reads and writes settings by a table: the one code path behind a cold start's parse, the
 * construct's environment and its synth check. Synth checks the very environment it writes,
 * with the reader a cold start runs, so the two cannot disagree; only the names differ (props
 * at synth, variables at cold start).
 */
import { ANY, readsAsUnset, type Reader, type SettingSpec } from './spec.js';

/** A setting's name as the caller knows it: an environment variable, or a construct prop. */
export type NameOf = (key: string) => string;
export type Env = Readonly<Record<string, string | undefined>>;
export type Values = Readonly<Record<string, unknown>>;

/** A rule between settings. It runs only when every setting it names is valid and known. */
export interface SettingRule {
  readonly keys: readonly string[];
  /** The readers it applies to. @default every reader */
  readonly readers?: readonly Reader[];
  check(values: Values, nameOf: NameOf): string[];
}

/** Settings, named presets (bundles of defaults a user can still override), and rules. */
export interface SettingsTable {
  readonly settings: Readonly<Record<string, SettingSpec>>;
  readonly presets: Readonly<Record<string, Values>>;
  readonly rules: readonly SettingRule[];
}

/** The setting that names a preset. */
export const PRESET = 'preset';

export interface ReadOptions {
  readonly nameOf: NameOf;
  /** Text known only at deploy (a CDK token): read if it can be, never judged. */
  readonly isDeployTime?: ((text: string) => boolean) | undefined;
}

export interface Reading {
  /** Every setting the reader reads: the value given, else the preset's, else the default. */
  readonly values: Values;
  /** Every problem, each a sentence naming the setting; empty when the reader can run. */
  readonly problems: string[];
}

/** The settings `reader` reads (every setting when undefined), as [key, spec] pairs. */
export const settingsOf = (
  table: SettingsTable,
  reader: Reader | undefined,
): [string, SettingSpec][] =>
  Object.entries(table.settings).filter(
    ([, spec]) => reader === undefined || spec.readers.includes(reader),
  );

/** A preset's defaults: none when no preset (or an unknown one) is named. */
export const presetOf = (table: SettingsTable, name: unknown): Values =>
  typeof name === 'string' && Object.hasOwn(table.presets, name) ? table.presets[name] : {};

/** Problems of one value on its own: bounds, allowed values, the setting's own check. */
export function valueProblems(
  spec: Pick<SettingSpec, 'min' | 'max' | 'why' | 'values' | 'check'>,
  value: unknown,
  name: string,
): string[] {
  if (spec.min !== undefined) {
    const max = spec.max ?? ANY;
    const ok = Number.isInteger(value) && (value as number) >= spec.min && (value as number) <= max;
    if (!ok) {
      const range = max === ANY ? `>= ${spec.min}` : `${spec.min}..${max}`;
      const why = spec.why === undefined ? '' : ` (${spec.why})`;
      return [`${name} must be an integer ${range}${why}, got ${String(value)}`];
    }
  }
  if (spec.values !== undefined && !spec.values.includes(value as string)) {
    const allowed = spec.values.join(', ') || '(none defined)';
    return [`${name} must be one of ${allowed}, got ${JSON.stringify(value)}`];
  }
  return spec.check?.(value, name) ?? [];
}

/**
 * What `reader` reads from `env` (every setting when undefined: the construct's own view), with
 * every problem: text that does not decode, a required setting unset, a value out of bounds, a
 * setting given without one it needs, a broken rule.
 */
export function readSettings(
  table: SettingsTable,
  reader: Reader | undefined,
  env: Env,
  options: ReadOptions,
): Reading {
  const { nameOf } = options;
  const deployTime = options.isDeployTime ?? (() => false);
  const read = settingsOf(table, reader);
  const values: Record<string, unknown> = {};
  const given = new Set<string>();
  /** Invalid, or known only at deploy: no rule judges it. */
  const unjudged = new Set<string>();
  const problems: string[] = [];
  for (const [key, spec] of read) {
    const text = env[spec.env];
    if (text === undefined || readsAsUnset(spec.codec, text)) continue;
    given.add(key);
    const deferred = deployTime(text);
    if (deferred) unjudged.add(key);
    try {
      values[key] = spec.codec.decode(text);
    } catch (error) {
      unjudged.add(key);
      if (!deferred) problems.push(`${nameOf(key)} ${(error as Error).message}`);
    }
  }
  const preset = presetOf(table, values[PRESET]);
  for (const [key, spec] of read) {
    if (given.has(key)) continue;
    values[key] = Object.hasOwn(preset, key) ? preset[key] : spec.default;
    if (values[key] === undefined && spec.required === true) {
      problems.push(`${nameOf(key)} is required`);
      unjudged.add(key);
    }
  }
  for (const [key, spec] of read) {
    if (unjudged.has(key) || values[key] === undefined) continue;
    const found = valueProblems(spec, values[key], nameOf(key));
    if (found.length > 0) unjudged.add(key);
    problems.push(...found);
  }
  for (const [key, spec] of read) {
    if (!given.has(key)) continue;
    for (const [needed, why] of Object.entries(spec.requires ?? {})) {
      if (given.has(needed) || values[needed] !== undefined) continue;
      problems.push(`${nameOf(key)} needs ${nameOf(needed)}${why === '' ? '' : ` (${why})`}`);
    }
  }
  for (const rule of table.rules) {
    const applies = rule.readers === undefined || (reader && rule.readers.includes(reader));
    if (applies !== true) continue;
    if (rule.keys.some((key) => unjudged.has(key))) continue;
    problems.push(...rule.check(values, nameOf));
  }
  return { values, problems };
}

/**
 * The environment text of every setting the construct sets: each given value, and the default
 * (a preset's first) of every `prop` or `ref` setting, so a deployed function's environment says
 * what it runs with. A default is left out while a setting it needs is unset, so the cold
 * start never reads it as given.
 */
export function writeSettings(table: SettingsTable, inputs: Values): Record<string, string> {
  const entries = Object.entries(table.settings);
  const texts: Record<string, string> = {};
  const preset = presetOf(table, inputs[PRESET]);
  const fallbacks = new Map<string, unknown>();
  for (const [key, spec] of entries) {
    if (inputs[key] !== undefined) texts[spec.env] = canonicalText(spec, inputs[key]);
    else if (spec.source !== 'env') {
      const fallback = Object.hasOwn(preset, key) ? preset[key] : spec.default;
      if (fallback !== undefined) fallbacks.set(key, fallback);
    }
  }
  for (const [key, fallback] of fallbacks) {
    const spec = table.settings[key];
    const needs = Object.keys(spec.requires ?? {});
    if (needs.every((needed) => inputs[needed] !== undefined || fallbacks.has(needed))) {
      texts[spec.env] = spec.codec.encode(fallback);
    }
  }
  return texts;
}

/**
 * A value's text in its normal form (a header lower-cased, a set sorted), as a cold start reads
 * it back; text that does not decode is written as given, for the reader to refuse.
 */
function canonicalText(spec: SettingSpec, value: unknown): string {
  const text = spec.codec.encode(value);
  try {
    return spec.codec.encode(spec.codec.decode(text));
  } catch {
    return text;
  }
}

/** The part of an environment `reader` reads. */
export function environmentOf(
  table: SettingsTable,
  reader: Reader,
  texts: Env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, spec] of settingsOf(table, reader)) {
    const text = texts[spec.env];
    if (text !== undefined) env[spec.env] = text;
  }
  return env;
}
