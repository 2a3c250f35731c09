/**
 * Builders of table entries, one per kind of value, so an entry reads as one line of facts.
 * Their return types keep the source and the default literal, so the construct's props and
 * `SETTING_DEFAULTS` are typed from the table.
 */
import {
  ANY,
  flagCodec,
  headerCodec,
  intCodec,
  jsonCodec,
  listCodec,
  textCodec,
  type Codec,
  type Reader,
  type SettingSpec,
  type Source,
} from './spec.js';

/** What an entry may add to its kind's facts. */
export type Extra<T> = Pick<
  SettingSpec<T>,
  'local' | 'required' | 'check' | 'requires' | 'prop' | 'why'
>;

type Entry<T, S extends Source, D> = SettingSpec<T, S> & { readonly default: D };

/** An integer within `min..max` (inclusive). */
export const int = <S extends Source, D extends number | undefined>(
  env: string,
  source: S,
  readers: readonly Reader[],
  fallback: D,
  min: number,
  max: number = ANY,
  extra?: Extra<number>,
): Entry<number, S, D> => ({
  env,
  source,
  readers,
  codec: intCodec,
  default: fallback,
  min,
  max,
  ...extra,
});

/** Text, trimmed. */
export const text = <S extends Source, D extends string | undefined>(
  env: string,
  source: S,
  readers: readonly Reader[],
  fallback: D,
  extra?: Extra<string>,
): Entry<string, S, D> => ({ env, source, readers, codec: textCodec, default: fallback, ...extra });

/** Headers that must never be chosen by configuration: OAC signs, Host routes, hop-by-hop. */
const RESERVED_HEADERS = [
  'host',
  'authorization',
  'x-forwarded-host',
  'x-forwarded-for',
  'connection',
  'content-length',
  'transfer-encoding',
];

/** Why a header name cannot be configured, as a sentence; none when it can. */
export const headerProblems = (name: string, header: string): string[] =>
  /^[a-z0-9-]+$/.test(header) && !RESERVED_HEADERS.includes(header)
    ? []
    : [
        `${name} ${JSON.stringify(header)} must be a plain lower-case header name other than ` +
          RESERVED_HEADERS.join(', '),
      ];

/** A request or response header name, lower-cased. */
export const header = <S extends Source, D extends string | undefined>(
  env: string,
  source: S,
  readers: readonly Reader[],
  fallback: D,
  extra?: Extra<string>,
): Entry<string, S, D> => ({
  env,
  source,
  readers,
  codec: headerCodec,
  default: fallback,
  check: (value, name) => headerProblems(name, value),
  ...extra,
});

/** One of `values`. */
export const oneOf = <S extends Source, V extends string, D extends V | undefined>(
  env: string,
  source: S,
  readers: readonly Reader[],
  values: readonly V[],
  fallback: D,
  extra?: Extra<V>,
): Entry<V, S, D> => ({
  env,
  source,
  readers,
  codec: textCodec as Codec<V>,
  values,
  default: fallback,
  ...extra,
});

/** A list of strings (JSON in the environment); `set` sorts it and drops duplicates. */
export const list = <S extends Source, D extends readonly string[] | undefined>(
  env: string,
  source: S,
  readers: readonly Reader[],
  fallback: D,
  item: (text: string) => string,
  set: boolean,
  extra?: Extra<readonly string[]>,
): Entry<readonly string[], S, D> => ({
  env,
  source,
  readers,
  codec: listCodec(item, set),
  default: fallback,
  ...extra,
});

/**
 * A structured value (objects, lists of objects) as JSON; `parse` checks its shape and throws
 * an Error saying what is wrong ("must be a list of …").
 */
export const json = <T, S extends Source, D extends T | undefined>(
  env: string,
  source: S,
  readers: readonly Reader[],
  fallback: D,
  parse: (value: unknown) => T,
  extra?: Extra<T>,
): Entry<T, S, D> => ({
  env,
  source,
  readers,
  codec: jsonCodec(parse),
  default: fallback,
  ...extra,
});

/** On (`1`) or off (`0`). */
export const flag = <S extends Source>(
  env: string,
  source: S,
  readers: readonly Reader[],
  fallback: boolean,
): Entry<boolean, S, boolean> => ({ env, source, readers, codec: flagCodec, default: fallback });

/** Each entry of a list checked on its own: one sentence per entry refused. */
export const eachEntry =
  (ok: (entry: string) => boolean, must: string) =>
  (entries: readonly string[], name: string): string[] =>
    entries
      .filter((entry) => !ok(entry))
      .map((entry) => `${name} entry ${JSON.stringify(entry)} ${must}`);
