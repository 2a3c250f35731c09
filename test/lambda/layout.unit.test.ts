/**
 * The shape of `lambda/`: use cases in the core, each in its own room, adapters by port, handlers
 * at the edge, no import cycle, and the in-memory adapters (beside the real ones, for the unit
 * tier and the contract suite) in no Lambda bundle.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { functionSpans, wallClockUses } from '../helpers/source-ast.js';
import { closure, findCycle, importsOf, ROOT, sourceFiles } from '../helpers/source-files.js';

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

/** The use cases, a folder each in `lambda/core`: none imports another. */
const USE_CASES = ['serve', 'regenerate', 'revalidate', 'operate'];
/** The regeneration queue's one dispatcher: the only folder that reaches several use cases. */
const DISPATCHER = 'worker';
/** What every use case may import besides itself: the page model, the top-level rules, settings. */
const SHARED = ['page', 'core', 'settings'];

/** The room of a core file: its folder under `lambda/core`, or `core` for the top level. */
const roomOf = (file: string) => /^lambda\/core\/([^/]+)\//.exec(file)?.[1] ?? 'core';

/**
 * Imports between rooms of the core that break the layout, one line each: a use case reaches
 * only the shared rooms and itself, the dispatcher the use cases too, and the shared rooms no
 * use case (else one use case could reach another through them).
 */
function roomViolations(files: readonly string[], edges: (file: string) => string[]): string[] {
  const allowed = (from: string, to: string) =>
    from === to || SHARED.includes(to) || (from === DISPATCHER && USE_CASES.includes(to));
  return files.flatMap((file) =>
    edges(file)
      .filter((target) => target.startsWith('lambda/core/'))
      .filter((target) => !allowed(roomOf(file), roomOf(target)))
      .map((target) => `${file} -> ${target}`),
  );
}

const localImports = (file: string) => importsOf(file).local;

describe("the core's rooms", () => {
  const core = sourceFiles('lambda/core');

  it('has a folder for each use case and the dispatcher, and no folder it does not name', () => {
    const rooms = new Set(core.map(roomOf));
    expect([...USE_CASES, DISPATCHER, ...SHARED].filter((room) => !rooms.has(room))).toEqual([]);
    expect(
      [...rooms].filter((room) => ![...USE_CASES, DISPATCHER, ...SHARED].includes(room)),
    ).toEqual([]);
  });

  it('lets a use case import only the page model, the top-level rules, settings and itself', () => {
    expect(roomViolations(core, localImports)).toEqual([]);
  });

  it('negative control: a use case reaching another, or the page model reaching one, is caught; the dispatcher is not', () => {
    const slipped: Record<string, string> = {
      // the import serve/miss.ts made before a MISS was given its regeneration
      'lambda/core/serve/miss.ts': 'lambda/core/regenerate/regenerate.ts',
      // the shared model reading a use case's own
      'lambda/core/page/in-progress.ts': 'lambda/core/revalidate/model.ts',
      // what the dispatcher is for
      'lambda/core/worker/process-message.ts': 'lambda/core/revalidate/fan-out.ts',
    };
    const edges = (file: string) => [
      ...localImports(file),
      ...Object.entries(slipped)
        .filter(([from]) => from === file)
        .map(([, to]) => to),
    ];
    expect(roomViolations(core, edges)).toEqual([
      'lambda/core/page/in-progress.ts -> lambda/core/revalidate/model.ts',
      'lambda/core/serve/miss.ts -> lambda/core/regenerate/regenerate.ts',
    ]);
  });
});

describe('import cycles', () => {
  it('finds none in lambda/, type imports included', () => {
    expect(findCycle(sourceFiles('lambda'))).toBeUndefined();
  });

  it('negative control: the checker finds the cycle of a small graph, and one import added to the tree', () => {
    const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'] };
    expect(findCycle(Object.keys(graph), (file) => graph[file] ?? [])).toEqual([
      'a',
      'b',
      'c',
      'a',
    ]);
    // rows.ts importing CacheKey back from cache-key.ts, which imports rows.ts: a cycle the
    // page model ended
    const back = (file: string) =>
      file === 'lambda/core/page/rows.ts'
        ? [...localImports(file), 'lambda/core/page/cache-key.ts']
        : localImports(file);
    expect(findCycle(sourceFiles('lambda'), back)).toEqual(
      expect.arrayContaining(['lambda/core/page/rows.ts', 'lambda/core/page/cache-key.ts']),
    );
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
