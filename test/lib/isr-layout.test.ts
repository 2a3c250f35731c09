/**
 * The shape of `lib/`: no import cycles, no Lambda adapter pulled into the CDK app, and a
 * settings module the Lambdas can bundle without the CDK or zod.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { closure, findCycle, importsOf, ROOT } from '../helpers/source-files.js';

const localImports = (file: string) => importsOf(file).local;

/** What a file loads when it runs: its imports but `import type`/`export type` (tsc erases those). */
const RUNTIME_IMPORT = /^(?:import|export)\s(?!type\s)[^;]*?from\s+'([^']+)'/gms;
function runtimeImports(file: string): { local: string[]; packages: string[] } {
  const { local, packages } = importsOf(file);
  const loaded = new Set(
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(RUNTIME_IMPORT)].map(([, to]) => to),
  );
  const isLoaded = (target: string) =>
    [...loaded].some(
      (to) => to !== undefined && join(file, '..', to).replace(/\.js$/, '.ts') === target,
    );
  return { local: local.filter(isLoaded), packages: packages.filter((name) => loaded.has(name)) };
}

/** Packages loaded at run time from `start`, through the local files it loads. */
function runtimePackages(start: string, edges = (file: string) => runtimeImports(file).local) {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    edges(file).forEach(visit);
  };
  visit(start);
  return new Set([...seen].flatMap((file) => runtimeImports(file).packages));
}

/** What the packed package may load: its dependencies, its peers, and Node's own modules. */
function undeclared(packages: Iterable<string>): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  const declared = new Set([
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
  ]);
  const nameOf = (specifier: string) =>
    specifier.startsWith('@')
      ? specifier.split('/').slice(0, 2).join('/')
      : specifier.split('/')[0];
  return [...packages]
    .filter((name) => !name.startsWith('node:') && !builtinModules.includes(name))
    .filter((name) => !declared.has(nameOf(name) ?? name))
    .sort();
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

  it("loads only the package's own dependencies at run time (a consumer installs no devDependency)", () => {
    expect(undeclared(runtimePackages('lib/index.ts'))).toEqual([]);
  });

  it('negative control: a core rule the construct reaches that loaded the idempotency engine is caught', () => {
    // The slip this guards against: sweep.ts (reached for its metric names) importing the
    // worker's disposition, which loads Powertools idempotency at run time.
    const slipped = (file: string) =>
      file === 'lambda/core/operate/sweep.ts'
        ? [...runtimeImports(file).local, 'lambda/core/worker/disposition.ts']
        : runtimeImports(file).local;
    expect(undeclared(runtimePackages('lib/index.ts', slipped))).toContain(
      '@aws-lambda-powertools/idempotency',
    );
  });

  it('keeps the settings module free of the CDK and zod, so Lambdas bundle it cheaply', () => {
    const reachable = [...closure('lambda/core/settings/index.ts')];
    const packages = reachable.flatMap((file) => importsOf(file).packages);
    expect(packages.filter((name) => /^(aws-cdk-lib|constructs|zod)(\/|$)/.test(name))).toEqual([]);
  });
});
