/** The settings table is consistent with itself: what an entry names exists and is valid. */
import { describe, expect, it } from '@jest/globals';
import { PRESETS, SETTINGS, TABLE } from '../../../../lambda/core/settings/table.js';
import { valueProblems } from '../../../../lambda/core/settings/engine.js';
import type { SettingSpec } from '../../../../lambda/core/settings/spec.js';

const ENTRIES = Object.entries(SETTINGS as Record<string, SettingSpec>);

/** Problems of a value on its own, after it travelled through the environment. */
const problemsOf = (key: string, spec: SettingSpec, value: unknown): string[] => {
  const back = spec.codec.decode(spec.codec.encode(value));
  expect([key, back]).toEqual([key, value]);
  return valueProblems(spec, back, key);
};

describe('the settings table', () => {
  it('gives every setting its own variable and at least one reader', () => {
    const variables = ENTRIES.map(([, spec]) => spec.env);
    expect(new Set(variables).size).toBe(variables.length);
    expect(ENTRIES.filter(([, spec]) => spec.readers.length === 0)).toEqual([]);
  });

  it('has defaults, npm start defaults and preset values that pass their own rules', () => {
    const values = ENTRIES.flatMap(([key, spec]) =>
      [spec.default, spec.local]
        .filter((value) => value !== undefined)
        .map((value) => [key, spec, value] as const),
    );
    for (const [key, spec, value] of values) expect(problemsOf(key, spec, value)).toEqual([]);
    const presets: Readonly<Record<string, Readonly<Record<string, unknown>>>> = PRESETS;
    for (const [name, preset] of Object.entries(presets)) {
      for (const [key, value] of Object.entries(preset)) {
        const spec = (SETTINGS as Record<string, SettingSpec | undefined>)[key];
        expect([name, key, spec === undefined]).toEqual([name, key, false]);
        expect(problemsOf(key, spec!, value)).toEqual([]);
      }
    }
  });

  it('names only settings that exist, read wherever the setting needing them is read', () => {
    for (const [key, spec] of ENTRIES) {
      for (const needed of Object.keys(spec.requires ?? {})) {
        const target = (SETTINGS as Record<string, SettingSpec | undefined>)[needed];
        expect([key, needed, target !== undefined]).toEqual([key, needed, true]);
        const unread = spec.readers.filter((reader) => !target!.readers.includes(reader));
        expect([key, needed, unread]).toEqual([key, needed, []]);
      }
    }
    for (const rule of TABLE.rules) {
      expect(rule.keys.filter((key) => !(key in SETTINGS))).toEqual([]);
    }
  });

  it('offers exactly the defined presets', () => {
    expect(SETTINGS.preset.values).toEqual(Object.keys(PRESETS));
    expect(SETTINGS.preset.readers).toEqual(
      expect.arrayContaining(['origin', 'worker', 'revalidate', 'sweeper', 'local']),
    );
  });
});
