/**
 * IAM's evaluation of identity policies, for the synthesized roles: as the IAM User Guide
 * describes it ("Policy evaluation logic",
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html): an
 * explicit Deny wins, else an Allow whose Action, Resource and every Condition match, else the
 * request is implicitly denied. Actions match case-insensitively, resources case-sensitively,
 * both with `*` and `?` ("IAM JSON policy elements: Action / Resource"); condition operators,
 * `IfExists` and the `ForAllValues`/`ForAnyValue` set qualifiers as "IAM JSON policy elements:
 * Condition operators" and "Set operators for multivalued context keys" describe them
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html,
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-single-vs-multi-valued-context-keys.html):
 * `ForAllValues` is true for a key the request does not carry. `@cloud-copilot/iam-simulate`
 * does this and more, but is AGPL-3.0 (this package is Apache-2.0), so this covers only the
 * operators the construct's policies use, and fails loudly on any other.
 */

export interface Statement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: unknown;
  readonly NotResource?: unknown;
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** One request as IAM authorises it: an action on a resource, with its context keys. */
export interface IamRequest {
  readonly action: string;
  readonly resource: string;
  /** Context keys (lower-case names); a multivalued key as a list. */
  readonly context?: Readonly<Record<string, string | readonly string[]>>;
}

export type Decision = 'allowed' | 'explicit-deny' | 'implicit-deny';

const listOf = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as readonly T[]) : [value as T];

/** An IAM wildcard (`*` any run, `?` one character) as a regular expression. */
function wildcard(pattern: string, flags = ''): RegExp {
  const body = [...pattern]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, flags);
}

const matchesAny = (patterns: readonly string[], value: string, flags = '') =>
  patterns.some((pattern) => wildcard(pattern, flags).test(value));

/** Whether one condition operator holds for the request's values of its key. */
function operatorHolds(operator: string, wanted: readonly string[], given: readonly string[]) {
  const any = (test: (value: string) => boolean) => given.some(test);
  switch (operator) {
    case 'StringEquals':
    case 'ArnEquals':
      return any((value) => wanted.includes(value));
    case 'StringNotEquals':
      return !any((value) => wanted.includes(value));
    case 'StringEqualsIgnoreCase':
      return any((value) => wanted.some((w) => w.toLowerCase() === value.toLowerCase()));
    case 'StringLike':
    case 'ArnLike':
      return any((value) => matchesAny(wanted, value));
    case 'StringNotLike':
    case 'ArnNotLike':
      return !any((value) => matchesAny(wanted, value));
    case 'Bool':
      return any((value) => wanted.map((w) => w.toLowerCase()).includes(value.toLowerCase()));
    default:
      throw new Error(`condition operator ${operator} is not evaluated here`);
  }
}

/** One condition block entry (`operator` -> key -> values) against the request's context. */
function conditionHolds(
  rawOperator: string,
  key: string,
  values: unknown,
  context: IamRequest['context'] = {},
): boolean {
  const wanted = listOf(values as string | readonly string[]).map(String);
  const present = Object.hasOwn(context, key.toLowerCase());
  const given = listOf(context[key.toLowerCase()]);
  if (rawOperator === 'Null') {
    const absent = !present || given.length === 0;
    return wanted.some((w) => (w === 'true') === absent);
  }
  const [qualifier, operatorWithIf] = rawOperator.includes(':')
    ? (rawOperator.split(':') as [string, string])
    : [undefined, rawOperator];
  const ifExists = operatorWithIf.endsWith('IfExists');
  const operator = ifExists ? operatorWithIf.slice(0, -'IfExists'.length) : operatorWithIf;
  if (qualifier === 'ForAllValues') {
    return given.every((value) => operatorHolds(operator, wanted, [value]));
  }
  if (qualifier === 'ForAnyValue') {
    return given.some((value) => operatorHolds(operator, wanted, [value]));
  }
  if (qualifier !== undefined) throw new Error(`set operator ${qualifier} is not evaluated here`);
  if (!present) return ifExists;
  return operatorHolds(operator, wanted, given);
}

/** Whether a statement applies to a request (its Effect aside). */
export function statementMatches(statement: Statement, request: IamRequest): boolean {
  const actionOk =
    statement.Action !== undefined
      ? matchesAny(listOf(statement.Action), request.action, 'i')
      : !matchesAny(listOf(statement.NotAction), request.action, 'i');
  if (!actionOk) return false;
  const resources = listOf(statement.Resource as string | readonly string[]);
  const resourceOk =
    statement.Resource !== undefined
      ? matchesAny(resources.map(stringOf), request.resource)
      : !matchesAny(
          listOf(statement.NotResource as string | readonly string[]).map(stringOf),
          request.resource,
        );
  if (!resourceOk) return false;
  return Object.entries(statement.Condition ?? {}).every(([operator, keys]) =>
    Object.entries(keys).every(([key, values]) =>
      conditionHolds(operator, key, values, request.context),
    ),
  );
}

function stringOf(value: unknown): string {
  if (typeof value !== 'string') {
    throw new Error(`an unresolved reference in a policy: ${JSON.stringify(value)}`);
  }
  return value;
}

/** IAM's decision on a request under identity-based statements. */
export function evaluate(statements: readonly Statement[], request: IamRequest): Decision {
  const applying = statements.filter((statement) => statementMatches(statement, request));
  if (applying.some((statement) => statement.Effect === 'Deny')) return 'explicit-deny';
  return applying.some((statement) => statement.Effect === 'Allow') ? 'allowed' : 'implicit-deny';
}

/** Pseudo parameters a template names, as the tests' account sees them. */
export const TEST_ACCOUNT = { partition: 'aws', region: 'us-east-1', accountId: '123456789012' };

/**
 * A template value with its references resolved: `Ref` and `Fn::GetAtt` by `refs` (logical id
 * or `logicalId.Attribute` to a string), pseudo parameters by `TEST_ACCOUNT`, `Fn::Join`,
 * `Fn::Select`, `Fn::Split` and `Fn::Sub` as CloudFormation does.
 */
export function resolveValue(value: unknown, refs: Readonly<Record<string, string>>): unknown {
  if (Array.isArray(value)) return value.map((item: unknown) => resolveValue(item, refs));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const [first] = entries;
  if (
    entries.length === 1 &&
    first !== undefined &&
    (first[0] === 'Ref' || first[0].startsWith('Fn::'))
  ) {
    return intrinsic(first[0], first[1], refs);
  }
  return Object.fromEntries(entries.map(([key, item]) => [key, resolveValue(item, refs)]));
}

const PSEUDO: Record<string, string> = {
  'AWS::Partition': TEST_ACCOUNT.partition,
  'AWS::Region': TEST_ACCOUNT.region,
  'AWS::AccountId': TEST_ACCOUNT.accountId,
  'AWS::URLSuffix': 'amazonaws.com',
};

function intrinsic(
  name: string,
  argument: unknown,
  refs: Readonly<Record<string, string>>,
): unknown {
  const known = (key: string): string => {
    const found = PSEUDO[key] ?? refs[key];
    if (found === undefined) throw new Error(`no local value for ${key}`);
    return found;
  };
  const args = resolveValue(argument, refs);
  switch (name) {
    case 'Ref':
      return known(String(args));
    case 'Fn::GetAtt': {
      const [id, attribute] = args as [string, string];
      return known(`${id}.${attribute}`);
    }
    case 'Fn::Join': {
      const [separator, parts] = args as [string, unknown[]];
      return parts.map(String).join(separator);
    }
    case 'Fn::Select': {
      const [index, list] = args as [number, unknown[]];
      return list[Number(index)];
    }
    case 'Fn::Split': {
      const [separator, text] = args as [string, string];
      return text.split(separator);
    }
    case 'Fn::Sub':
      return String(args).replace(/\$\{([^}]+)\}/g, (_m, key: string) =>
        known(key.includes('.') ? key : key),
      );
    default:
      throw new Error(`${name} is not resolved here`);
  }
}
