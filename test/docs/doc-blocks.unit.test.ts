/**
 * Every fenced block of README.md and docs/*.md is run by a test or says why not (issue 35): it
 * carries a marker (the convention is at the top of test/helpers/doc-steps.ts), a `doc` kind
 * this harness knows, and, where a test checks it instead, a test that reads its page. A page
 * with runnable steps must be in a session that runs them (test/docs/first-hour.test.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  DOC_KINDS,
  FIRST_HOUR_DOCS,
  ROOT,
  RUNNABLE_KINDS,
  sessionSteps,
} from '../helpers/doc-session.js';
import { fencedBlocks } from '../helpers/doc-steps.js';

/** Pages whose blocks another branch is still marking, with who runs what they have. */
const NOT_YET: Record<string, string> = {};

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
].filter((page) => NOT_YET[page] === undefined);

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** A test file named by a marker: it must exist and read the page (name it). */
function testProblem(page: string, test: string | undefined): string | undefined {
  if (test === undefined || !/^test\/.+\.ts$/.test(test)) return `names no test file ("${test}")`;
  if (!existsSync(join(ROOT, test))) return `names ${test}, which does not exist`;
  return read(test).includes(basename(page)) ? undefined : `names ${test}, which never reads it`;
}

/** What is wrong with the blocks of one page: `page:line: problem`, none when all is well. */
function blockProblems(page: string, text: string): string[] {
  const problems: string[] = [];
  for (const block of fencedBlocks(text)) {
    const at = `${page}:${block.line}`;
    const { marker } = block;
    if (marker === undefined) {
      problems.push(`${at}: unmarked: add <!-- doc: <kind> --> (test/helpers/doc-steps.ts)`);
    } else if (marker.name !== 'doc') {
      const owner = readdirSync(join(ROOT, 'test/docs')).some((file) =>
        read(`test/docs/${file}`).includes(`'${marker.name}'`),
      );
      if (!owner) problems.push(`${at}: no test in test/docs runs marker "${marker.name}"`);
    } else if (!(DOC_KINDS as readonly string[]).includes(marker.kind)) {
      problems.push(`${at}: unknown kind "${marker.kind}" (one of ${DOC_KINDS.join(', ')})`);
    } else if (marker.kind === 'checked-by' || (marker.kind === 'aws' && marker.arg !== 'synth')) {
      const problem = testProblem(page, marker.arg);
      if (problem !== undefined) problems.push(`${at}: ${marker.kind} ${problem}`);
    }
  }
  return problems;
}

describe('the blocks of README.md and docs/', () => {
  it('are all marked, with a known kind, and a test that reads the page where one checks it', () => {
    expect(PAGES.flatMap((page) => blockProblems(page, read(page)))).toEqual([]);
  });

  it('are run: a page with runnable steps is in a session, its prints blocks after a run', () => {
    const runnable = PAGES.filter((page) =>
      fencedBlocks(read(page)).some(
        (block) =>
          block.marker?.name === 'doc' &&
          (RUNNABLE_KINDS as readonly string[]).includes(block.marker.kind),
      ),
    );
    expect(
      runnable.filter((page) => !(FIRST_HOUR_DOCS as readonly string[]).includes(page)),
    ).toEqual([]);
    expect(() => sessionSteps(runnable)).not.toThrow();
  });

  it('negative controls: an unmarked block, an unknown kind, a test that never reads the page', () => {
    const fence = '```';
    const page = [
      `${fence}sh`,
      'npm start',
      fence,
      '<!-- doc: runn -->',
      `${fence}sh`,
      'npm start',
      fence,
      '<!-- doc: checked-by test/docs/limits.unit.test.ts -->',
      '',
      `${fence}ts`,
      'new IsrService(stack, "Isr");',
      fence,
      '<!-- doc: figure -->',
      `${fence}`,
      'a ─▶ b',
      fence,
    ].join('\n');
    expect(blockProblems('docs/NEW.md', page)).toEqual([
      'docs/NEW.md:1: unmarked: add <!-- doc: <kind> --> (test/helpers/doc-steps.ts)',
      expect.stringMatching(/^docs\/NEW\.md:5: unknown kind "runn"/),
      'docs/NEW.md:10: checked-by names test/docs/limits.unit.test.ts, which never reads it',
    ]);
  });
});
