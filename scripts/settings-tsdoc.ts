/**
 * The TSDoc of the settings tables and the props, read from the sources (comments never reach
 * a bundle): for docs/SETTINGS.md and for the test that holds each `@default` to its value.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import ts from 'typescript';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** One entry's TSDoc: its text and its tags (`@default`, `@bounds`). */
export interface EntryDoc {
  readonly text: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** Where each table and the props live, by the name they are exported under. */
export const SOURCES = {
  settings: [
    ['lambda/core/settings/service-settings.ts', 'SERVICE_SETTINGS'],
    ['lambda/core/settings/routing-settings.ts', 'ROUTING_SETTINGS'],
    ['lambda/core/settings/function-settings.ts', 'FUNCTION_SETTINGS'],
    ['lambda/core/settings/purge-settings.ts', 'PURGE_SETTINGS'],
    ['lambda/core/settings/table.ts', 'SETTINGS'],
  ],
  deploy: [['lib/isr-deploy-settings.ts', 'DEPLOY_SETTINGS']],
  props: [['lib/isr-service-props.ts', 'IsrServiceProps']],
} as const;

function docOf(node: ts.Node): EntryDoc | undefined {
  const jsdoc = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc).at(-1);
  if (jsdoc === undefined) return undefined;
  const text = (ts.getTextOfJSDocComment(jsdoc.comment) ?? '').replace(/\s+/g, ' ').trim();
  const tags: Record<string, string> = {};
  for (const tag of jsdoc.tags ?? []) {
    tags[tag.tagName.text] = (ts.getTextOfJSDocComment(tag.comment) ?? '')
      .replace(/\s+/g, ' ')
      .trim();
  }
  return { text, tags };
}

/** The TSDoc of each member of an exported object literal or interface, by name. */
export function docsOf(file: string, exported: string): Map<string, EntryDoc | undefined> {
  const source = ts.createSourceFile(
    file,
    readFileSync(`${ROOT}${file}`, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const docs = new Map<string, EntryDoc | undefined>();
  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === exported) {
      for (const member of node.members) {
        if (member.name !== undefined) docs.set(member.name.getText(source), docOf(member));
      }
    } else if (
      ts.isVariableDeclaration(node) &&
      node.name.getText(source) === exported &&
      node.initializer !== undefined &&
      ts.isObjectLiteralExpression(node.initializer)
    ) {
      for (const property of node.initializer.properties) {
        if (!ts.isSpreadAssignment(property) && property.name !== undefined) {
          docs.set(property.name.getText(source), docOf(property));
        }
      }
    } else ts.forEachChild(node, visit);
  };
  visit(source);
  return docs;
}

const collect = (sources: readonly (readonly [string, string])[]) =>
  new Map(sources.flatMap(([file, name]) => [...docsOf(file, name)]));

/** Every entry's TSDoc: the settings table, the deploy table, the props interface. */
export function allDocs() {
  return {
    settings: collect(SOURCES.settings),
    deploy: collect(SOURCES.deploy),
    props: collect(SOURCES.props),
  };
}

const ENUMS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  RemovalPolicy,
  RetentionDays,
};

/** What a `@default` says: its literal (empty for `- …`, unset), its value, and the comment. */
export interface DeclaredDefault {
  readonly literal: string;
  readonly value: unknown;
  readonly rest: string;
}

/**
 * Reads the literal a `@default` starts with: `-` (unset), a number (`10_000`), a quoted string,
 * a list of quoted strings, `Duration.seconds(n)` / `.minutes(n)`, or a CDK enum member.
 */
export function parseDefault(text: string): DeclaredDefault {
  const match = (pattern: RegExp, value: (found: RegExpExecArray) => unknown) => {
    const found = pattern.exec(text);
    if (found === null) return undefined;
    return { literal: found[0], value: value(found), rest: text.slice(found[0].length).trim() };
  };
  return (
    match(/^-/, () => undefined) ??
    match(/^'([^']*)'/, (found) => found[1]) ??
    match(/^\[[^\]]*\]/, (found) => JSON.parse(found[0].replaceAll("'", '"')) as unknown) ??
    match(/^\d[\d_]*/, (found) => Number(found[0].replaceAll('_', ''))) ??
    match(/^(true|false)\b/, (found) => found[1] === 'true') ??
    match(/^Duration\.(seconds|minutes)\((\d+)\)/, (found) =>
      found[1] === 'seconds'
        ? Duration.seconds(Number(found[2]))
        : Duration.minutes(Number(found[2])),
    ) ??
    match(/^(\w+)\.(\w+)/, (found) => ENUMS[found[1]]?.[found[2]]) ?? {
      literal: text,
      value: text,
      rest: '',
    }
  );
}

/** Whether a declared default is the value (Durations by length). */
export function sameDefault(declared: unknown, value: unknown): boolean {
  if (declared instanceof Duration && value instanceof Duration) {
    return declared.toSeconds() === value.toSeconds();
  }
  return JSON.stringify(declared) === JSON.stringify(value);
}
