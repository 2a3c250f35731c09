/**
 * `npm run docs:api` (the README's "every prop") stops on any warning (typedoc.json treats them
 * as errors), and a TSDoc tag TypeDoc does not know is one: every tag the construct's sources use
 * is one of TypeDoc's or defined in tsdoc.json (issue 35, item 3). Cheaper than running TypeDoc.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { OptionDefaults } from 'typedoc';
import { closure, ROOT } from '../helpers/source-files.js';

/** The tags tsdoc.json (beside tsconfig.json, where TypeDoc reads it) defines. */
const defined = (
  JSON.parse(readFileSync(join(ROOT, 'tsdoc.json'), 'utf8')) as {
    tagDefinitions: { tagName: string }[];
  }
).tagDefinitions.map((tag) => tag.tagName);

/** Block and modifier tags at the start of a TSDoc line, in every file TypeDoc reads. */
function tagsUsed(): Map<string, string> {
  const used = new Map<string, string>();
  for (const file of closure('lib/index.ts')) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [, tag] of text.matchAll(/^\s*(?:\/\*\*|\*)\s*(@[A-Za-z]+)/gm)) {
      if (tag !== undefined && !used.has(tag)) used.set(tag, file);
    }
  }
  return used;
}

const unknownTags = (known: readonly string[]) =>
  [...tagsUsed()].filter(([tag]) => !known.includes(tag)).map(([tag, file]) => `${tag} (${file})`);

describe("the API reference's TSDoc tags", () => {
  const typedoc = [...OptionDefaults.blockTags, ...OptionDefaults.modifierTags];

  it('are all known to TypeDoc, its own or tsdoc.json', () => {
    expect(unknownTags([...typedoc, ...defined])).toEqual([]);
  });

  it('negative control: without tsdoc.json, @bounds is unknown (typedoc exited 3 on it)', () => {
    expect(unknownTags(typedoc)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^@bounds \(/)]),
    );
  });
});
