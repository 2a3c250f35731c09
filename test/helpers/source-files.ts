/**
 * The repository's source files, their relative imports (read as text) and the cycles among
 * them: what the layout tests (test/lib/isr-layout.test.ts, test/lambda/layout.unit.test.ts)
 * check the shape of.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const IMPORT = /^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms;

/** Relative imports (as repository paths) and package imports of one source file. */
export function importsOf(file: string): { local: string[]; packages: string[] } {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const local: string[] = [];
  const packages: string[] = [];
  for (const [, target] of text.matchAll(IMPORT)) {
    if (target === undefined) continue;
    if (target.startsWith('.')) {
      local.push(
        relative(ROOT, normalize(join(ROOT, dirname(file), target))).replace(/\.js$/, '.ts'),
      );
    } else {
      packages.push(target);
    }
  }
  return { local, packages };
}

/** Every file reachable from `start` through relative imports. */
export function closure(start: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    importsOf(file).local.forEach(visit);
  };
  visit(start);
  return seen;
}

/** Every `.ts` file under `directory` (a repository path), sorted. */
export function sourceFiles(directory: string): string[] {
  const files: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(join(ROOT, path))) {
      const child = `${path}/${name}`;
      if (statSync(join(ROOT, child)).isDirectory()) walk(child);
      else if (name.endsWith('.ts')) files.push(child);
    }
  };
  walk(directory);
  return files.sort();
}

/** One import cycle among `files` (type imports included), if any: the files round it. */
export function findCycle(
  files: readonly string[],
  edges: (file: string) => string[] = (file) => importsOf(file).local,
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
