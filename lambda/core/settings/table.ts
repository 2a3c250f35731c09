/**
 * The one table of settings: name, environment variable, prop, default, bounds and readers of
 * every setting, with the named presets and the rules between settings. Everything else is
 * derived from it: each function's environment (lib/isr-functions.ts), the cold-start parse
 * (lambda/shared/config.ts), the synth check (lib/isr-settings.ts), the construct's props
 * (lib/isr-service-props.ts) and docs/SETTINGS.md. How to add a setting: docs/SETTINGS.md.
 */
import { oneOf } from './define.js';
import type { SettingsTable, Values } from './engine.js';
import { FUNCTION_SETTINGS } from './function-settings.js';
import { NEXTJS_PRESET } from './presets.js';
import { PURGE_SETTINGS } from './purge-settings.js';
import { ROUTING_SETTINGS } from './routing-settings.js';
import { RULES } from './rules.js';
import { ALL, SERVICE_SETTINGS } from './service-settings.js';
import type { SettingSpec, Source } from './spec.js';

/**
 * Named bundles of defaults (values in `presets.ts`): a preset's value replaces a setting's
 * default, and a value the user gives still wins. Checked like any value (table.unit.test.ts).
 */
export const PRESETS = { nextjs: NEXTJS_PRESET } as const satisfies Readonly<
  Record<string, Values>
>;
export type PresetName = Extract<keyof typeof PRESETS, string>;

export const SETTINGS = {
  ...SERVICE_SETTINGS,
  ...ROUTING_SETTINGS,
  ...FUNCTION_SETTINGS,
  ...PURGE_SETTINGS,
  /**
   * A named bundle of defaults for a kind of upstream; a setting given explicitly still wins.
   * `nextjs`: a Next.js App Router site (RSC variants, draft cookies, `/api/*`, `/_next/static/`;
   * docs/NEXTJS.md).
   * @default - none
   */
  preset: oneOf(
    'ISR_PRESET',
    'prop',
    [...ALL, 'local', 'deploy'],
    Object.keys(PRESETS) as PresetName[],
    undefined,
  ),
};

export const TABLE: SettingsTable = { settings: SETTINGS, presets: PRESETS, rules: RULES };

type Table = typeof SETTINGS;
export type SettingKey = keyof Table;
// `[K in keyof Table …]` is written out (not `SettingKey`), so the mapped types stay homomorphic
// and carry each entry's TSDoc to the construct's props.
type ValueOf<S> = S extends SettingSpec<infer T, Source> ? T : never;

/** Each setting as a function reads it: its default's type says whether it can be unset. */
export type SettingValues = {
  readonly [K in keyof Table]: Table[K]['default'] extends undefined
    ? ValueOf<Table[K]> | undefined
    : ValueOf<Table[K]>;
};

/** The construct props the table defines: one per `prop` setting, documented by its entry. */
export type SettingProps = {
  readonly [K in keyof Table as Table[K]['source'] extends 'prop' ? K : never]?: ValueOf<Table[K]>;
};

/** Every default, in the units the functions read them. */
export const SETTING_DEFAULTS = Object.fromEntries(
  Object.entries(SETTINGS).map(([key, spec]) => [key, spec.default]),
) as { readonly [K in SettingKey]: Table[K]['default'] };
