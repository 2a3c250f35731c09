/**
 * A Next.js app folder outside this repository, as a user has one: the fixture app's sources, a
 * package.json of its own, and a node_modules of its own holding next (the newest or the oldest
 * supported version), react and react-dom. The packages are hard links to this repository's
 * installed copies: the same bytes, no download, and no symlink (Turbopack refuses a
 * node_modules that leads out of the app's root: "Could not find the Next.js package").
 */
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NEXT_APP_DIR, runNext } from './next-build.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ROOT_MODULES = join(ROOT, 'node_modules');

/** The installed package each supported end of the range is (package.json's devDependencies). */
export const NEXT_PACKAGES = { newest: 'next', oldest: 'next-oldest' } as const;
export type NextRelease = keyof typeof NEXT_PACKAGES;

/** The fixture's sources an app is made of (no build output, no prose). */
const FIXTURE_SOURCES = [
  'app',
  'lib',
  'public',
  'jsconfig.json',
  'middleware.js',
  'next.config.js',
];

/** The version of an installed package of this repository. */
const installedVersion = (name: string): string =>
  (
    JSON.parse(readFileSync(join(ROOT_MODULES, name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;

/** The version of the installed `next` package for `release`. */
export const nextVersionOf = (release: NextRelease): string =>
  installedVersion(NEXT_PACKAGES[release]);

/** Where Node finds `name` from inside `from` (a package folder), or undefined. */
function packageDirOf(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** The package folders `names` need, dependencies and installed optional/peer ones included. */
function closureOf(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const visit = (name: string, from: string, required: boolean) => {
    const dir = packageDirOf(name, from);
    if (dir === undefined) {
      if (required) throw new Error(`${name} is not installed (from ${from})`);
      return;
    }
    if (seen.has(dir)) return;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, dir, true);
    for (const field of ['optionalDependencies', 'peerDependencies']) {
      for (const dep of Object.keys(pkg[field] ?? {})) visit(dep, dir, false);
    }
  };
  for (const name of names) visit(name, ROOT, true);
  // A package nested in another's node_modules comes along with it.
  return [...seen].filter((dir) => ![...seen].some((other) => dir.startsWith(other + sep)));
}

/** Copies `from` to `to` as hard links (symlinks as symlinks). */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const [source, target] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else linkSync(source, target);
  }
}

export interface OutsideAppOptions {
  readonly release: NextRelease;
  /** The app's package.json besides its dependencies (e.g. `type`); default: none. */
  readonly packageJson?: Readonly<Record<string, unknown>>;
  /** More installed packages to link in (e.g. the adapter's SDK dependencies). */
  readonly alsoInstalled?: readonly string[];
  /** Fixture paths not to copy (e.g. a page that needs a setting the app's config lacks). */
  readonly leaveOut?: readonly string[];
}

/** Makes the app in `dir` (which must not exist): sources, package.json, node_modules. */
export function createOutsideApp(dir: string, options: OutsideAppOptions): void {
  const left = (options.leaveOut ?? []).map((path) => join(NEXT_APP_DIR, path));
  for (const name of FIXTURE_SOURCES) {
    cpSync(join(NEXT_APP_DIR, name), join(dir, name), {
      recursive: true,
      filter: (source) => !left.some((path) => source === path || source.startsWith(path + sep)),
    });
  }
  const dependencies = {
    next: nextVersionOf(options.release),
    react: installedVersion('react'),
    'react-dom': installedVersion('react-dom'),
  };
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'my-next-app', private: true, ...options.packageJson, dependencies }),
  );
  const next = NEXT_PACKAGES[options.release];
  for (const source of closureOf([next, 'react', 'react-dom', ...(options.alsoInstalled ?? [])])) {
    const path = relative(ROOT_MODULES, source);
    linkTree(source, join(dir, 'node_modules', path === next ? 'next' : path));
  }
  mkdirSync(join(dir, 'node_modules', '.bin'));
  symlinkSync('../next/dist/bin/next', join(dir, 'node_modules', '.bin', 'next'));
}

/** Runs `next <args>` of the app's own next in `dir`; rejects with its output when it fails. */
export const runAppNext = (
  dir: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<string> =>
  runNext(join(dir, 'node_modules', 'next', 'dist', 'bin', 'next'), dir, args, env);
