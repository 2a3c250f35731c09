/**
 * The shape of `lambda/`: use cases in the core, adapters by port, handlers at the edge, and the
 * in-memory adapters (beside the real ones, for the unit tier and the contract suite) in no
 * Lambda bundle.
 */
import { describe, expect, it } from '@jest/globals';
import { closure, importsOf, sourceFiles } from '../helpers/source-files.js';

const FUNCTIONS = ['origin', 'worker', 'revalidate', 'sweeper'] as const;
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
