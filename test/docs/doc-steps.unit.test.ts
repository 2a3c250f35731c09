/**
 * How test/helpers/doc-steps.ts reads a page's marked steps and holds output to what the page
 * says it prints: the `…` wildcard matches within a line only, and a line too many or too few
 * fails (else a check could pass on output the page never showed).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { docSteps, fencedBlocks, printsMatch } from '../helpers/doc-steps.js';

const folder = mkdtempSync(join(tmpdir(), 'isr-doc-steps-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const fence = '```';
const page = (text: string) => {
  const file = join(folder, `${Math.random().toString(16).slice(2)}.md`);
  writeFileSync(file, text);
  return pathToFileURL(file);
};

describe('docSteps', () => {
  it('reads marked blocks in order, folds prints into the step before, skips unmarked ones', () => {
    const url = page(
      [
        '<!-- demo: run -->',
        '',
        `${fence}sh`,
        'echo hi',
        fence,
        '',
        `${fence}sh`,
        'echo unmarked',
        fence,
        '<!-- demo: prints -->',
        `${fence}text`,
        'hi',
        fence,
        '<!-- other: run -->',
        `${fence}sh`,
        'echo other',
        fence,
      ].join('\n'),
    );
    expect(docSteps(url, 'demo')).toEqual([{ kind: 'run', code: 'echo hi\n', prints: 'hi\n' }]);
  });

  it('refuses a prints block with no step before it', () => {
    const url = page(['<!-- demo: prints -->', `${fence}text`, 'hi', fence].join('\n'));
    expect(() => docSteps(url, 'demo')).toThrow('a prints block before any step');
  });
});

describe('fencedBlocks', () => {
  it('finds every block with its line, language and the marker before it, arguments kept', () => {
    const text = [
      '# Page',
      '<!-- doc: checked-by test/x.test.ts -->',
      '',
      `${fence}ts`,
      'const a = 1;',
      fence,
      'text',
      `${fence}`,
      'a ─▶ b',
      fence,
    ].join('\n');
    expect(fencedBlocks(text)).toEqual([
      {
        line: 4,
        lang: 'ts',
        code: 'const a = 1;\n',
        marker: { name: 'doc', kind: 'checked-by', arg: 'test/x.test.ts' },
      },
      { line: 8, lang: '', code: 'a ─▶ b\n' },
    ]);
  });
});

describe('printsMatch', () => {
  const expected = 'cache-status: facetheory-isr; hit; ttl=…\ncontent-type: text/x-component\n';

  it('matches line for line, … as any text, CRLF as LF, header names in any case', () => {
    const got = 'Cache-Status: facetheory-isr; hit; ttl=3599\r\ncontent-type: text/x-component\r\n';
    expect(printsMatch(expected, got)).toBe(true);
  });

  it.each([
    ['another value', 'cache-status: facetheory-isr; hit; ttl=1\ncontent-type: text/html\n'],
    ['a line missing', 'cache-status: facetheory-isr; hit; ttl=1\n'],
    [
      'a line more',
      'cache-status: facetheory-isr; hit; ttl=1\ncontent-type: text/x-component\nx\n',
    ],
    [
      'a miss for a hit',
      'cache-status: facetheory-isr; fwd=miss; ttl=1\ncontent-type: text/x-component',
    ],
  ])('refuses %s', (_, got) => {
    expect(printsMatch(expected, got)).toBe(false);
  });

  it('reads a line ⋮ as any number of lines (none included), and nothing else', () => {
    const headers = 'HTTP/1.1 202 Accepted\n⋮\n{"effect_id":"rv_…"}\n';
    const answer = (...lines: string[]) =>
      ['HTTP/1.1 202 Accepted', ...lines, '', '{"effect_id":"rv_1"}'].join('\r\n');
    expect(printsMatch(headers, answer('content-type: application/json', 'date: x'))).toBe(true);
    expect(printsMatch(headers, 'HTTP/1.1 202 Accepted\n{"effect_id":"rv_1"}')).toBe(true);
    expect(
      printsMatch(headers, answer('date: x').replace('202 Accepted', '401 Unauthorized')),
    ).toBe(false);
    expect(printsMatch(headers, `${answer('date: x')}\ntrailing`)).toBe(false);
  });
});
