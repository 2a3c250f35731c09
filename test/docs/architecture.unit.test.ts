/**
 * docs/ARCHITECTURE.md's rules -> files table stays true by grep: each rule names one file, the
 * file exists and exports every name the row says defines the rule, and no other file in
 * `lambda/` exports one of those names (one home per rule).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ROOT, sourceFiles } from '../helpers/source-files.js';

interface Row {
  readonly rule: string;
  readonly files: readonly string[];
  readonly names: readonly string[];
}

/** The table under `## Where each rule lives`: a rule, its file(s), the names defining it. */
function rulesTable(markdown: string): Row[] {
  const section = markdown.split('## Where each rule lives')[1]?.split('\n## ')[0] ?? '';
  const code = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map(([, inner]) => inner ?? '');
  return section
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*(rule\s*\||-)/.test(line))
    .map((line) => {
      const [rule = '', file = '', names = ''] = line.split('|').slice(1, -1);
      return { rule: rule.trim(), files: code(file), names: code(names) };
    });
}

const EXPORTED = (name: string) =>
  new RegExp(
    `^export\\s+(?:declare\\s+)?(?:abstract\\s+)?(?:const|let|function|async function|class|interface|type|enum)\\s+${name}\\b`,
    'm',
  );

/** What is wrong with the table, one line per problem; empty when it is true. */
function problemsOf(rows: readonly Row[], read: (file: string) => string | undefined): string[] {
  const exporters = new Map<string, string[]>();
  for (const file of sourceFiles('lambda')) {
    const text = read(file) ?? '';
    for (const [, name] of text.matchAll(
      /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:const|let|function|async function|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm,
    )) {
      if (name !== undefined) exporters.set(name, [...(exporters.get(name) ?? []), file]);
    }
  }
  return rows.flatMap((row) => {
    if (row.files.length !== 1) return [`"${row.rule}" names ${row.files.length} files`];
    const [file = ''] = row.files;
    const text = read(file);
    if (text === undefined) return [`${file} does not exist`];
    if (row.names.length === 0) return [`"${row.rule}" names nothing ${file} defines`];
    return row.names.flatMap((name) => {
      if (!EXPORTED(name).test(text)) return [`${file} does not export ${name}`];
      const elsewhere = (exporters.get(name) ?? []).filter((other) => other !== file);
      return elsewhere.length > 0 ? [`${name} is exported by ${elsewhere.join(', ')} too`] : [];
    });
  });
}

const readRepo = (file: string) =>
  existsSync(join(ROOT, file)) ? readFileSync(join(ROOT, file), 'utf8') : undefined;
const rows = rulesTable(readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8'));

describe("ARCHITECTURE.md's rules -> files table", () => {
  it('lists the rules', () => {
    expect(rows.length).toBeGreaterThan(30);
  });

  it('is true by grep: one file per rule, exporting what defines it, and no other file does', () => {
    expect(problemsOf(rows, readRepo)).toEqual([]);
  });

  it('negative control: a second file, a missing file or name, a second home are each caught', () => {
    const lease = rows.find((row) => row.files[0] === 'lambda/core/page/lease.ts');
    expect(lease).toBeDefined();
    const doctored: Row[] = [
      {
        rule: 'two homes',
        files: ['lambda/core/page/lease.ts', 'lambda/core/page/rows.ts'],
        names: ['x'],
      },
      { rule: 'gone', files: ['lambda/core/gone.ts'], names: ['x'] },
      { rule: 'missing name', files: ['lambda/core/page/lease.ts'], names: ['notALeaseRule'] },
    ];
    // A copy of `isLeaseLive` exported from another file is a second home.
    const withCopy = (file: string) =>
      file === 'lambda/core/page/freshness.ts'
        ? `${readRepo(file) ?? ''}\nexport const isLeaseLive = () => true;\n`
        : readRepo(file);
    expect(problemsOf([...doctored, ...(lease ? [lease] : [])], withCopy)).toEqual([
      '"two homes" names 2 files',
      'lambda/core/gone.ts does not exist',
      'lambda/core/page/lease.ts does not export notALeaseRule',
      'isLeaseLive is exported by lambda/core/page/freshness.ts too',
    ]);
  });
});
