/**
 * The shape of one setting and the codecs that carry a value through the environment. A value
 * travels as text that decodes to exactly the value encoded (lists as JSON), so what `cdk synth`
 * checked is what a cold start reads. Pure and small: every Lambda bundles it.
 */

/** The functions, each of which reads its own settings at cold start. */
export type FunctionKind = 'origin' | 'worker' | 'revalidate' | 'sweeper' | 'purger';
/** The functions that serve, render, revalidate or sweep pages: all but the purger. */
export const PAGE_FUNCTIONS: readonly FunctionKind[] = [
  'origin',
  'worker',
  'revalidate',
  'sweeper',
];
export const FUNCTION_KINDS: readonly FunctionKind[] = [...PAGE_FUNCTIONS, 'purger'];
/** Who reads a setting: a function at cold start, `npm start` itself, or the construct at synth. */
export type Reader = FunctionKind | 'local' | 'deploy';

/**
 * Where a deployed function's value comes from: `prop`, the construct prop of the same name;
 * `ref`, the construct itself (a resource's name, a timeout, a secret's ARN); `env`, the
 * environment alone (`npm start`, the Lambda runtime): deployed, such a setting keeps its default.
 */
export type Source = 'prop' | 'ref' | 'env';

/** Text in the environment and the value it stands for, both ways. */
export interface Codec<T> {
  /** Never throws: any value of the type has a text. */
  encode(value: T): string;
  /** @throws Error whose message says what the text must be ("must be a number, got …") */
  decode(text: string): T;
  /** Blank text means "unset" for scalars; for a list it is the empty list. */
  readonly blankIsEmpty?: boolean;
}

export interface SettingSpec<T = unknown, S extends Source = Source> {
  readonly env: string;
  readonly source: S;
  readonly readers: readonly Reader[];
  readonly codec: Codec<T>;
  readonly default?: T | undefined;
  /** `npm start`'s default, when it differs (set as an environment variable by local/start.ts). */
  readonly local?: T | undefined;
  /** Unset with no default is a problem. */
  readonly required?: boolean;
  /** Integer bounds (inclusive), and why when it is not obvious. */
  readonly min?: number;
  readonly max?: number;
  readonly why?: string;
  /** The only values allowed. */
  readonly values?: readonly string[];
  /** Problems of the value on its own, each a whole sentence naming the setting as `name`. */
  check?(value: T, name: string): string[];
  /** Settings that must be set when this one is: key → why (may be empty). */
  readonly requires?: Readonly<Record<string, string>>;
  /** The construct prop that sets a `ref` setting, when it has another name or type. */
  readonly prop?: string;
}

/** No upper bound. */
export const ANY = Number.MAX_SAFE_INTEGER;

const isBlank = (text: string): boolean => text.trim() === '';

/** Integers: `Number` of the text; bounds come from the spec, so synth and cold start say the same. */
export const intCodec: Codec<number> = {
  encode: String,
  decode: (text) => {
    const value = Number(text.trim());
    if (Number.isNaN(value) && text.trim() !== 'NaN') {
      throw new Error(`must be a number, got ${JSON.stringify(text)}`);
    }
    return Object.is(value, -0) ? 0 : value;
  },
};

/** Text as given, trimmed (a value with spaces inside travels whole). */
export const textCodec: Codec<string> = {
  encode: (value) => value,
  decode: (text) => text.trim(),
};

/** Text exactly as given (a secret: a space in it is part of it). */
export const verbatimCodec: Codec<string> = { encode: (value) => value, decode: (text) => text };

/** A header name: trimmed and lower-cased on both sides. */
export const headerCodec: Codec<string> = {
  encode: (value) => value,
  decode: (text) => text.trim().toLowerCase(),
};

/** `0` or `1`. */
export const flagCodec: Codec<boolean> = {
  encode: (value) => (value ? '1' : '0'),
  decode: (text) => {
    if (text.trim() === '1') return true;
    if (text.trim() === '0') return false;
    throw new Error('must be 0 or 1');
  },
};

/**
 * Any JSON value; `parse` checks its shape and says what is wrong. A structured setting (a list
 * of objects, a map) uses it with its own `parse`.
 */
export function jsonCodec<T>(parse: (value: unknown) => T): Codec<T> {
  return {
    encode: (value) => JSON.stringify(value),
    decode: (text) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new Error(`must be JSON, got ${JSON.stringify(text)}`);
      }
      return parse(value);
    },
  };
}

const stringArray = (value: unknown): string[] => {
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  throw new Error('must be a JSON array of strings');
};

/**
 * A list of strings. Written as JSON (any item, commas and quotes included, round-trips); read
 * as JSON when the text starts with `[`, else as a comma-separated list (by hand, `npm start`),
 * blank items dropped. `item` normalises each entry; `set` also sorts and drops duplicates.
 */
export function listCodec(item: (text: string) => string, set = false): Codec<readonly string[]> {
  const normalise = (items: readonly string[]): string[] => {
    const mapped = items.map(item);
    return set ? [...new Set(mapped)].sort() : mapped;
  };
  return {
    blankIsEmpty: true,
    encode: (value) => JSON.stringify(value),
    decode: (text) => {
      if (text.trim().startsWith('[')) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new Error(`must be a JSON array of strings, got ${JSON.stringify(text)}`);
        }
        return normalise(stringArray(parsed));
      }
      return normalise(text.split(',').filter((part) => !isBlank(part)));
    },
  };
}

/** Whether a value's text reads as unset. */
export const readsAsUnset = (codec: Codec<unknown>, text: string | undefined): boolean =>
  text === undefined || (codec.blankIsEmpty !== true && isBlank(text));
