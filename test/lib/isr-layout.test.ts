/**
 * The shape of `lib/`: no import cycles, no Lambda adapter pulled into the CDK app, and a
 * settings module the Lambdas can bundle without the CDK or zod.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { closure, importsOf, ROOT } from '../helpers/source-files.js';

const localImports = (file: string) => importsOf(file).local;

/** One import cycle among `files`, if any. */
function findCycle(
  files: readonly string[],
  edges: (file: string) => string[] = localImports,
): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | undefined => {
    if (state.get(file) === 'done') return undefined;
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file];
    state.set(file, 'open');
    path.push(file);
    for (const next of edges(file).filter((target) => files.includes(target))) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(file, 'done');
    return undefined;
  };
  for (const file of files) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

const libFiles = readdirSync(join(ROOT, 'lib'))
  .filter((name) => name.endsWith('.ts'))
  .map((name) => `lib/${name}`);

describe('lib layout', () => {
  it('has no import cycles, type imports included', () => {
    expect(findCycle(libFiles)).toBeUndefined();
  });

  it('finds a cycle when there is one (negative control)', () => {
    // the cycle the props file ended: the construct's props were read by modules it imports
    const before = (file: string) =>
      file === 'lib/isr-settings.ts' ? ['lib/isr-service.ts'] : localImports(file);
    expect(findCycle(libFiles, before)).toEqual(
      expect.arrayContaining(['lib/isr-service.ts', 'lib/isr-settings.ts']),
    );
  });

  it('pulls no Lambda adapter or handler into the CDK app', () => {
    const reachable = [...closure('lib/isr-service.ts'), ...closure('lib/isr-stack.ts')];
    expect(reachable.filter((file) => /^lambda\/(adapters|origin|worker)\//.test(file))).toEqual(
      [],
    );
  });

  it('keeps the settings module free of the CDK and zod, so Lambdas bundle it cheaply', () => {
    const reachable = [...closure('lambda/core/settings.ts')];
    const packages = reachable.flatMap((file) => importsOf(file).packages);
    expect(packages.filter((name) => /^(aws-cdk-lib|constructs|zod)(\/|$)/.test(name))).toEqual([]);
  });
});
