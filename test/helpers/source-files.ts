/**
 * The repository's source files and their relative imports, read as text: what the layout
 * tests (test/lib/isr-layout.test.ts, test/lambda/layout.unit.test.ts) check the shape of.
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
