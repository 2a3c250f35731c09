/**
 * docs/SETTINGS.md from the settings tables and their TSDoc: `npm run settings:doc` writes it,
 * test/scripts/settings-doc.unit.test.ts fails when it is stale. The TSDoc is read from the
 * sources (comments never reach a bundle), the facts from the tables themselves.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as prettier from 'prettier';
import { SETTINGS } from '../lambda/core/settings/index.js';
import { headerCodec, type SettingSpec } from '../lambda/core/settings/spec.js';
import { DEPLOY_SETTINGS, type DeploySetting } from '../lib/isr-deploy-settings.js';
import { allDocs, parseDefault, ROOT, type EntryDoc } from './settings-tsdoc.js';

export const SETTINGS_DOC = `${ROOT}docs/SETTINGS.md`;

const code = (text: string): string => `\`${text}\``;
const cell = (text: string): string => text.replaceAll('|', '\\|');
/** The first sentence, which is what a table row has room for. */
const firstSentence = (text: string): string => /^(.*?\.)(\s|$)/.exec(text)?.[1] ?? text;

/** A declared default with its literal as code (`` `60` (1 minute) ``), or `unset: …`. */
function shownDefault(declared: string): string {
  const { literal, rest } = parseDefault(declared);
  if (literal === '-') return rest === '' ? 'unset' : `unset: ${rest}`;
  return rest === '' ? code(literal) : `${code(literal)} ${rest}`;
}

const READERS: Readonly<Record<string, string>> = { local: 'npm start', deploy: 'construct' };

function boundsOf(
  spec: Pick<SettingSpec, 'min' | 'max' | 'why' | 'values' | 'requires'> & {
    readonly codec?: unknown;
    readonly required?: boolean;
  },
  doc: EntryDoc | undefined,
): string {
  const parts: string[] = [];
  if (spec.min !== undefined) {
    const range =
      spec.max === undefined || spec.max >= Number.MAX_SAFE_INTEGER
        ? `>= ${spec.min}`
        : `${spec.min}..${spec.max}`;
    parts.push(spec.why === undefined ? range : `${range} (${spec.why})`);
  }
  if (spec.values !== undefined) {
    parts.push(spec.values.length > 0 ? spec.values.map(code).join(', ') : '(none defined yet)');
  }
  if (spec.codec === headerCodec) parts.push('a plain lower-case header name');
  if (doc?.tags.bounds !== undefined) parts.push(doc.tags.bounds);
  for (const needed of Object.keys(spec.requires ?? {})) parts.push(`needs ${code(needed)}`);
  if (spec.required === true) parts.push('required');
  return parts.join('; ') || '—';
}

function defaultOf(spec: SettingSpec, doc: EntryDoc | undefined): string {
  const declared = doc?.tags.default;
  const encoded = (value: unknown) => code(spec.codec.encode(value));
  let shown: string;
  if (declared === undefined) shown = spec.default === undefined ? 'unset' : encoded(spec.default);
  else shown = shownDefault(declared);
  return spec.local === undefined ? shown : `${shown}; \`npm start\`: ${encoded(spec.local)}`;
}

function propOf(key: string, spec: SettingSpec): string {
  if (spec.source === 'prop') return code(key);
  if (spec.prop !== undefined) return code(spec.prop);
  return spec.source === 'ref' ? '(the construct)' : '(environment only)';
}

/** The settings the functions read, one row each. */
function functionRows(docs: Map<string, EntryDoc | undefined>): string[] {
  const rows = Object.entries(SETTINGS as Record<string, SettingSpec>).map(([key, spec]) => {
    const doc = docs.get(key);
    const readers = spec.readers.map((reader) => READERS[reader] ?? reader).join(', ');
    return [
      code(key),
      propOf(key, spec),
      code(spec.env),
      defaultOf(spec, doc),
      boundsOf(spec, doc),
      readers,
      firstSentence(doc?.text ?? ''),
    ];
  });
  return table(['setting', 'prop', 'variable', 'default', 'bounds', 'read by', 'what'], rows);
}

/** The settings only the construct reads. */
function deployRows(docs: Map<string, EntryDoc | undefined>): string[] {
  const rows = Object.entries(DEPLOY_SETTINGS as Record<string, DeploySetting<unknown>>).map(
    ([key, spec]) => {
      const doc = docs.get(key);
      return [
        code(key),
        shownDefault(doc?.tags.default ?? '-'),
        boundsOf(spec, doc),
        firstSentence(doc?.text ?? ''),
      ];
    },
  );
  return table(['prop', 'default', 'bounds', 'what'], rows);
}

/** The props that name resources rather than settings. */
function resourceRows(props: Map<string, EntryDoc | undefined>): string[] {
  const rows = [...props].map(([key, doc]) => {
    return [code(key), shownDefault(doc?.tags.default ?? '-'), firstSentence(doc?.text ?? '')];
  });
  return table(['prop', 'default', 'what'], rows);
}

function table(header: readonly string[], rows: readonly string[][]): string[] {
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)];
}

/** The whole of docs/SETTINGS.md, formatted as the repository formats Markdown. */
export async function renderSettingsDoc(): Promise<string> {
  const docs = allDocs();
  const template = readFileSync(`${ROOT}scripts/settings-doc.md`, 'utf8');
  const text = template
    .replace('{{functions}}', functionRows(docs.settings).join('\n'))
    .replace('{{deploy}}', deployRows(docs.deploy).join('\n'))
    .replace('{{resources}}', resourceRows(docs.props).join('\n'));
  const options = (await prettier.resolveConfig(SETTINGS_DOC)) ?? {};
  return prettier.format(text, { ...options, parser: 'markdown' });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(SETTINGS_DOC, await renderSettingsDoc());
  console.log(`wrote ${SETTINGS_DOC}`);
}
