/**
 * The service's settings, from one table (`settings/table.ts`): defaults, bounds, readers and
 * the rules between settings. `lib/` applies them at `cdk synth` and `shared/config.ts` at cold
 * start through the same reader (`settings/engine.ts`), so synth refuses exactly what a cold
 * start would. Pure (no AWS CDK, no I/O), so it costs a Lambda bundle little.
 */
export * from './limits.js';
export { ANY, FUNCTION_KINDS, type FunctionKind, type Reader, type Source } from './spec.js';
export {
  SETTING_DEFAULTS,
  SETTINGS,
  TABLE,
  type PresetName,
  type SettingKey,
  type SettingProps,
  type SettingValues,
} from './table.js';
export {
  PRESET,
  presetOf,
  readSettings,
  valueProblems,
  writeSettings,
  environmentOf,
  type Env,
  type NameOf,
  type SettingRule,
  type SettingsTable,
} from './engine.js';
