/**
 * Per-path cache keys (`keyRules`): a path whose answer depends on a few named query parameters
 * and on the image formats the viewer accepts (Next.js's image optimizer, `/_next/image`), not
 * on the site's `allowedQueryParams` or variant headers. Each parameter is checked at the edge
 * and in the origin, so a malformed request is a 400 before any read, and the Accept header is
 * normalised to one of three values, so one key holds one deterministic answer. The functions
 * marked "embedded" run in the CloudFront Function too (`traffic-rules.ts` says in what subset).
 */
import { matchesPathPattern } from './path-patterns.js';

/** One query parameter of a key rule's key. */
export interface KeyParam {
  readonly name: string;
  /** `path`: a site-relative path (`/…`, not `//`); `int`: a decimal integer, no leading zero. */
  readonly kind: 'path' | 'int';
  /** `int`: the smallest value. @default 1 */
  readonly min?: number | undefined;
  /** `int`: the largest value; `path`: the longest value. */
  readonly max: number;
}

/** A path pattern (`**` for any characters) and what its cache key is made of. */
export interface KeyRule {
  readonly path: string;
  /** The key's query parameters, all required; any other parameter is dropped. */
  readonly params: readonly KeyParam[];
  /** `image`: the Accept header, normalised by `normalisedAcceptOf`, is part of the key. */
  readonly accept?: 'image' | undefined;
}

/** The verdict of `keyParamsVerdict` for a URL on another host: the upstream's to judge. */
export const PASS_VERDICT = 'pass';

/** The first rule whose path pattern matches `path`, or null. Embedded. */
export function keyRuleOf(rules: readonly KeyRule[], path: string): KeyRule | null {
  for (let i = 0; i < rules.length; i++) {
    if (matchesPathPattern(rules[i].path, path)) return rules[i];
  }
  return null;
}

/**
 * Checks a request's (decoded) parameters against its rule: '' when they make a key, 'pass' for
 * an absolute or protocol-relative `path` parameter (the upstream checks its own allow-list of
 * hosts; never cached), else the reason for a 400. Embedded.
 */
export function keyParamsVerdict(
  rule: KeyRule,
  values: Readonly<Record<string, string | undefined>>,
): string {
  for (let i = 0; i < rule.params.length; i++) {
    const param = rule.params[i];
    const value = values[param.name];
    const bad = 'the ' + param.name + ' parameter ';
    if (value === undefined || value === '') return bad + 'is required';
    if (value.length > param.max) return bad + 'is too long';
    if (param.kind === 'int') {
      for (let j = 0; j < value.length; j++) {
        if ('0123456789'.indexOf(value.charAt(j)) < 0) return bad + 'is not an integer';
      }
      const low = param.min === undefined ? 1 : param.min;
      const n = Number(value);
      if (value.charAt(0) === '0' || n < low || n > param.max) {
        return bad + 'is outside ' + low + '..' + param.max;
      }
      continue;
    }
    const lower = value.toLowerCase();
    if (lower.indexOf('//') === 0 || lower.indexOf('http://') === 0) return 'pass';
    if (lower.indexOf('https://') === 0) return 'pass';
    if (value.charAt(0) !== '/') return bad + 'must be a site-relative path';
    for (let j = 0; j < value.length; j++) {
      const allowed = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/@';
      if (allowed.indexOf(value.charAt(j)) < 0) return bad + 'has a character outside its set';
    }
    const segmented = value + '/';
    if (segmented.indexOf('/./') >= 0 || segmented.indexOf('/../') >= 0) {
      return bad + 'must not hold "." or ".." segments';
    }
  }
  return '';
}

/**
 * The Accept an image render is sent, from the viewer's: AVIF, else WebP, else anything, in
 * the order Next.js's image optimizer prefers them. Embedded.
 */
export function normalisedAcceptOf(accept: string | undefined): string {
  const value = (accept || '').toLowerCase();
  if (value.indexOf('image/avif') >= 0) return 'image/avif,image/webp,*/*';
  if (value.indexOf('image/webp') >= 0) return 'image/webp,*/*';
  return '*/*';
}

/** The functions the CloudFront Function carries besides the traffic rules. */
export const KEY_RULE_FUNCTIONS = [keyRuleOf, keyParamsVerdict, normalisedAcceptOf] as const;

/** Most rules: each is a CloudFront behaviour and cache policy of its own. */
export const MAX_KEY_RULES = 4;
/** CloudFront's query strings per cache policy. */
const MAX_KEY_PARAMS = 10;

/** The `keyRules` setting's JSON, shape-checked (bounds are `keyRuleProblems`'). */
export function parseKeyRules(value: unknown): KeyRule[] {
  const must = 'must be a list of {path, params: [{name, kind, min?, max}], accept?}';
  if (!Array.isArray(value)) throw new Error(must);
  return value.map((entry: unknown) => {
    const rule = entry as Record<string, unknown>;
    const ok =
      typeof rule === 'object' &&
      rule !== null &&
      typeof rule.path === 'string' &&
      Array.isArray(rule.params) &&
      rule.params.every(isKeyParam) &&
      (rule.accept === undefined || rule.accept === 'image') &&
      Object.keys(rule).every((key) => ['path', 'params', 'accept'].includes(key));
    if (!ok) throw new Error(must);
    return rule as unknown as KeyRule;
  });
}

function isKeyParam(entry: unknown): boolean {
  const param = entry as Record<string, unknown>;
  return (
    typeof param === 'object' &&
    param !== null &&
    typeof param.name === 'string' &&
    (param.kind === 'path' || param.kind === 'int') &&
    (param.min === undefined || typeof param.min === 'number') &&
    typeof param.max === 'number' &&
    Object.keys(param).every((key) => ['name', 'kind', 'min', 'max'].includes(key))
  );
}

/** Why a rule cannot be used, as sentences; none when it can. */
export function keyRuleProblems(rule: KeyRule, name: string): string[] {
  const problems: string[] = [];
  if (!rule.path.startsWith('/') || rule.path.startsWith('/_isr/')) {
    problems.push(`${name} ${rule.path}: path must start with / and not be the service's own`);
  }
  if (rule.params.length === 0 || rule.params.length > MAX_KEY_PARAMS) {
    problems.push(`${name} ${rule.path}: 1 to ${MAX_KEY_PARAMS} params`);
  }
  for (const param of rule.params) {
    const limit = param.kind === 'int' ? 1_000_000_000 : 4096;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(param.name)) {
      problems.push(`${name} ${rule.path}: ${JSON.stringify(param.name)} is not a parameter name`);
    }
    const low = param.min ?? 1;
    if (!Number.isInteger(param.max) || !Number.isInteger(low) || low < 0 || param.max < low) {
      problems.push(`${name} ${rule.path}: ${param.name} needs integer bounds, min <= max`);
    } else if (param.max > limit || (param.kind === 'path' && param.min !== undefined)) {
      problems.push(`${name} ${rule.path}: ${param.name}'s bounds are out of range`);
    }
  }
  return problems;
}
