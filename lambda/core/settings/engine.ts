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

/** A reading under way: values so far, which were given, which no rule may judge. */
interface Pass {
  readonly read: [string, SettingSpec][];
  readonly values: Record<string, unknown>;
  readonly given: Set<string>;
  /** Invalid, or known only at deploy. */
  readonly unjudged: Set<string>;
  readonly problems: string[];
  readonly nameOf: NameOf;
}

/** Decodes what `env` gives; a text known only at deploy is read if it can be, never judged. */
function decodeGiven(pass: Pass, env: Env, deployTime: (text: string) => boolean): void {
  for (const [key, spec] of pass.read) {
    const text = env[spec.env];
    if (text === undefined || readsAsUnset(spec.codec, text)) continue;
    pass.given.add(key);
    const deferred = deployTime(text);
    if (deferred) pass.unjudged.add(key);
    try {
      pass.values[key] = spec.codec.decode(text);
    } catch (error) {
      pass.unjudged.add(key);
      if (!deferred) pass.problems.push(`${pass.nameOf(key)} ${(error as Error).message}`);
    }
  }
}

/** Fills what is not given from the preset, else the default; a required one left unset is a problem. */
function fillDefaults(pass: Pass, table: SettingsTable): void {
  const preset = presetOf(table, pass.values[PRESET]);
  for (const [key, spec] of pass.read) {
    if (pass.given.has(key)) continue;
    pass.values[key] = Object.hasOwn(preset, key) ? preset[key] : spec.default;
    if (pass.values[key] === undefined && spec.required === true) {
      pass.problems.push(`${pass.nameOf(key)} is required`);
      pass.unjudged.add(key);
    }
  }
}

/** Each value on its own, then each given setting's needs. */
function checkValues(pass: Pass): void {
  const { values, nameOf } = pass;
  for (const [key, spec] of pass.read) {
    if (pass.unjudged.has(key) || values[key] === undefined) continue;
    const found = valueProblems(spec, values[key], nameOf(key));
    if (found.length > 0) pass.unjudged.add(key);
    pass.problems.push(...found);
  }
  for (const [key, spec] of pass.read) {
    if (!pass.given.has(key)) continue;
    for (const [needed, why] of Object.entries(spec.requires ?? {})) {
      if (pass.given.has(needed) || values[needed] !== undefined) continue;
      const reason = why === '' ? '' : ` (${why})`;
      pass.problems.push(`${nameOf(key)} needs ${nameOf(needed)}${reason}`);
    }
  }
}

/**
 * What `reader` reads from `env` (every setting when undefined: the construct's own view), with
 * every problem: text that does not decode, a required setting unset, a value out of bounds, a
 * setting given without one it needs, a broken rule (judged only between valid values).
 */
export function readSettings(
  table: SettingsTable,
  reader: Reader | undefined,
  env: Env,
  options: ReadOptions,
): Reading {
  const pass: Pass = {
    read: settingsOf(table, reader),
    values: {},
    given: new Set(),
    unjudged: new Set(),
    problems: [],
    nameOf: options.nameOf,
  };
  decodeGiven(pass, env, options.isDeployTime ?? (() => false));
  fillDefaults(pass, table);
  checkValues(pass);
  for (const rule of table.rules) {
    const applies = rule.readers === undefined || (reader && rule.readers.includes(reader));
    if (applies !== true || rule.keys.some((key) => pass.unjudged.has(key))) continue;
    pass.problems.push(...rule.check(pass.values, options.nameOf));
  }
  return { values: pass.values, problems: pass.problems };
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
