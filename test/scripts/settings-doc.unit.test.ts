/**
 * The settings' documentation cannot drift: docs/SETTINGS.md is what the tables generate, every
 * prop's `@default` is its value, and the props the table defines carry the entries' TSDoc.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { SETTINGS } from '../../lambda/core/settings/index.js';
import { DEPLOY_SETTINGS } from '../../lib/isr-deploy-settings.js';
import { renderSettingsDoc, SETTINGS_DOC } from '../../scripts/settings-doc.js';
import {
  allDocs,
  parseDefault,
  ROOT,
  sameDefault,
  type EntryDoc,
} from '../../scripts/settings-tsdoc.js';

const docs = allDocs();

/** Each prop whose `@default` is missing or says another value than its table's. */
function wrongDefaults(
  entries: [string, { readonly default?: unknown; readonly source?: string }][],
  docsOf: Map<string, EntryDoc | undefined>,
): string[] {
  return entries.flatMap(([key, spec]) => {
    if (spec.source !== undefined && spec.source !== 'prop') return [];
    const declared = docsOf.get(key)?.tags.default;
    if (declared === undefined) return [`${key}: no @default`];
    const { value } = parseDefault(declared);
    return sameDefault(value, spec.default) ? [] : [`${key}: @default ${declared}`];
  });
}

describe('settings documentation', () => {
  it('docs/SETTINGS.md is what `npm run settings:doc` writes', async () => {
    expect(readFileSync(SETTINGS_DOC, 'utf8')).toBe(await renderSettingsDoc());
  });

  it('gives every prop the default its table holds', () => {
    expect(wrongDefaults(Object.entries(SETTINGS), docs.settings)).toEqual([]);
    expect(wrongDefaults(Object.entries(DEPLOY_SETTINGS), docs.deploy)).toEqual([]);
  });

  it('finds a @default that says another value (negative control)', () => {
    const doctored = new Map(docs.settings);
    doctored.set('leaseSeconds', { text: 'Lease.', tags: { default: '45' } });
    doctored.set('deployId', { text: 'Deploy.', tags: {} });
    expect(wrongDefaults(Object.entries(SETTINGS), doctored)).toEqual([
      'deployId: no @default',
      'leaseSeconds: @default 45',
    ]);
  });

  it('documents every setting, and every resource prop with its default', () => {
    const undocumented = [...docs.settings, ...docs.deploy, ...docs.props]
      .filter(([, doc]) => doc === undefined || doc.text === '')
      .map(([key]) => key);
    expect(undocumented).toEqual([]);
    expect([...docs.props].filter(([, doc]) => doc?.tags.default === undefined)).toEqual([]);
    const tables = new Set([...Object.keys(SETTINGS), ...Object.keys(DEPLOY_SETTINGS)]);
    expect([...docs.props.keys()].filter((key) => tables.has(key))).toEqual([]);
  });

  it("hands each entry's TSDoc to the construct prop it defines", () => {
    const file = `${ROOT}lambda/core/settings/table.ts`;
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2024.d.ts'],
      types: [],
      strict: true,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
    const props = checker
      .getExportsOfModule(module)
      .find((found) => found.name === 'SettingProps')!;
    const members = checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(props));
    const propSettings = Object.entries(SETTINGS).filter(([, spec]) => spec.source === 'prop');
    expect(members.map((member) => member.name).sort()).toEqual(
      propSettings.map(([key]) => key).sort(),
    );
    for (const member of members) {
      const text = ts
        .displayPartsToString(member.getDocumentationComment(checker))
        .replace(/\s+/g, ' ');
      expect([member.name, text]).toEqual([member.name, docs.settings.get(member.name)?.text]);
    }
  });
});
