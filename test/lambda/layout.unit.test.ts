/**
 * The shape of `lambda/`: use cases in the core, adapters by port, handlers at the edge, and the
 * in-memory adapters (beside the real ones, for the unit tier and the contract suite) in no
 * Lambda bundle.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { functionSpans, wallClockUses } from '../helpers/source-ast.js';
import { closure, importsOf, ROOT, sourceFiles } from '../helpers/source-files.js';

const FUNCTIONS = ['origin', 'worker', 'revalidate', 'sweeper', 'purger'] as const;
const entry = (name: string) => `lambda/${name}/index.ts`;
const isMemoryAdapter = (file: string) =>
  /^lambda\/adapters\/[^/]+\/memory\.ts$/.test(file) ||
  file === 'lambda/adapters/shared/memory-table.ts';

describe('lambda layout', () => {
  it.each(FUNCTIONS)('bundles no in-memory adapter into the %s function', (name) => {
    expect([...closure(entry(name))].filter(isMemoryAdapter)).toEqual([]);
  });

  it('negative control: an entry that imported a memory adapter would be caught', () => {
    const reachable = [...closure('test/helpers/memory-service.ts')];
    expect(reachable.filter(isMemoryAdapter).length).toBeGreaterThan(0);
  });

  it('keeps the core free of adapters, handlers and the AWS SDK', () => {
    const core = sourceFiles('lambda/core');
    const outward = core.flatMap((file) =>
      importsOf(file)
        .local.filter((target) => !target.startsWith('lambda/core/'))
        .map((target) => `${file} -> ${target}`),
    );
    const sdk = core.flatMap((file) =>
      importsOf(file)
        .packages.filter((name) => name.startsWith('@aws-sdk/'))
        .map((name) => `${file} -> ${name}`),
    );
    expect(outward).toEqual([]);
    expect(sdk).toEqual([]);
  });

  it('keeps every adapter in a folder named after its port, one technology per file', () => {
    const misplaced = sourceFiles('lambda/adapters').filter(
      (file) => !/^lambda\/adapters\/(shared\/.+|[a-z-]+\/[a-z0-9-]+)\.ts$/.test(file),
    );
    expect(misplaced).toEqual([]);
  });
});

/** Longest function allowed in lambda/: one that fits on a screen, with room to spare. */
const MAX_FUNCTION_LINES = 80;

describe('function length', () => {
  const tooLong = (file: string, text: string) =>
    functionSpans(file, text)
      .filter((span) => span.lines > MAX_FUNCTION_LINES)
      .map((span) => `${file}:${span.line} ${span.name} (${span.lines} lines)`);

  it(`keeps every function in lambda/ within ${MAX_FUNCTION_LINES} lines`, () => {
    const files = sourceFiles('lambda');
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap((file) => tooLong(file, readFileSync(join(ROOT, file), 'utf8')))).toEqual(
      [],
    );
  });

  it('negative control: an 81-line method, arrow or function is caught', () => {
    const body = Array.from({ length: 79 }, (_, i) => `  step(${i});`).join('\n');
    const source = [
      `function long() {\n${body}\n}`,
      `const arrow = () => {\n${body}\n};`,
      `class C {\n  method() {\n${body}\n  }\n}`,
      `function short() {\n  step(0);\n}`,
    ].join('\n');
    expect(tooLong('probe.ts', source)).toEqual([
      'probe.ts:1 long (81 lines)',
      'probe.ts:82 arrow (81 lines)',
      'probe.ts:164 method (81 lines)',
    ]);
  });
});

describe('time and randomness only through their ports', () => {
  /** The ports' own system implementations: the one place each is read. */
  const PORTS = new Set(['lambda/core/clock.ts', 'lambda/core/random.ts']);

  it('never reads the wall clock, sets a timer or draws Math.random in the core or a use case', () => {
    const uses = sourceFiles('lambda/core')
      .filter((file) => !PORTS.has(file))
      .flatMap((file) =>
        wallClockUses(file, readFileSync(join(ROOT, file), 'utf8')).map((use) => `${file}:${use}`),
      );
    expect(uses).toEqual([]);
  });

  it('negative control: each direct use is caught, and comments, strings and formatting are not', () => {
    const source = [
      'const a = Date.now();',
      'const b = performance.now();',
      'await new Promise((resolve) => setTimeout(resolve, 5));',
      'const c = Math.random();',
      'const d = AbortSignal.timeout(10);',
      'const e = new Date();',
      'setInterval(tick, 5);',
      '// Date.now() in a comment',
      "const f = 'Math.random()';",
      'const g = new Date(seconds * 1000).toUTCString();',
      'const h = clock.now();',
    ].join('\n');
    expect(wallClockUses('probe.ts', source)).toEqual([
      '1: Date.now',
      '2: performance.now',
      '3: setTimeout',
      '4: Math.random',
      '5: AbortSignal.timeout',
      '6: new Date()',
      '7: setInterval',
    ]);
  });
});
