/**
 * What the package ships, built from this repository into `dist/`:
 * - `functions`: `dist/functions/<fn>/index.mjs` (+ map, licences), the Lambda assets the
 *   construct deploys and the bundle tests measure;
 * - `cli`: `dist/cli/isr.mjs`, the `isr` bin as one self-contained file;
 * - `next`: `dist/next/index.mjs`, the Next.js adapter (`facetheory-isr/next`) as one file;
 * - `esm`: every `exports` entry of package.json, compiled by tsc with declarations (for an
 *   entry whose code is a bundle, its declarations only).
 * Each target is skipped when `build-stamp.ts` finds its inputs unchanged.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { isFresh, writeStamp } from './build-stamp.js';
import { bundleNextAdapter } from '../next/build.js';
import { BUNDLE_FILE, FUNCTION_NAMES, LAMBDA_BUNDLE } from './bundle-options.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const TARGETS = ['functions', 'cli', 'next', 'esm'] as const;
export type Target = (typeof TARGETS)[number];

/** Where compiled modules go; an `exports` path `./dist/esm/<p>.js` is built from `<p>.ts`. */
const ESM_DIR = 'dist/esm';
/** Inputs of every target besides what it reads: the build itself and the dependency versions. */
const BUILD_INPUTS = [
  'package-lock.json',
  'scripts/build-targets.ts',
  'scripts/build-stamp.ts',
  'scripts/bundle-options.ts',
];

/** The prebuilt Lambda asset directory of one function, as a repository path. */
export const functionBundleDir = (name: string) => `dist/functions/${name}`;
export const CLI_BUNDLE = 'dist/cli/isr.mjs';
export const NEXT_BUNDLE = 'dist/next/index.mjs';

/** Builds the targets that are stale; returns the ones it built. */
export async function buildTargets(targets: readonly Target[] = TARGETS): Promise<Target[]> {
  const built: Target[] = [];
  for (const target of targets) {
    const { outputs, run } = RECIPES[target];
    if (isFresh(ROOT, target, outputs())) continue;
    const inputs = await run();
    writeStamp(ROOT, target, [...BUILD_INPUTS, ...inputs]);
    built.push(target);
  }
  return built;
}

interface Recipe {
  readonly outputs: () => string[];
  /** Builds the target; returns the repository files it read. */
  readonly run: () => Promise<string[]>;
}

const RECIPES: Record<Target, Recipe> = {
  functions: {
    outputs: () => FUNCTION_NAMES.map((name) => `${functionBundleDir(name)}/${BUNDLE_FILE}`),
    run: buildFunctions,
  },
  cli: { outputs: () => [CLI_BUNDLE], run: buildCli },
  next: {
    outputs: () => [NEXT_BUNDLE],
    run: async () => localInputs(await bundleNextAdapter(join(ROOT, NEXT_BUNDLE))),
  },
  esm: { outputs: () => esmEntries().map((entry) => entry.output), run: compileEntries },
};

/** Repository files esbuild read (node_modules is covered by package-lock.json). */
const localInputs = (metafile: Metafile) =>
  Object.keys(metafile.inputs).filter((input) => !input.startsWith('node_modules/'));

/**
 * One esbuild run for the four functions, written beside `dist/functions` at the same depth
 * (source map paths are relative to the bundle) and moved into place only once all succeeded.
 */
async function buildFunctions(): Promise<string[]> {
  const staging = join(ROOT, 'dist', `.functions-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  try {
    const { metafile } = await build({
      ...LAMBDA_BUNDLE,
      absWorkingDir: ROOT,
      entryPoints: FUNCTION_NAMES.map((name) => ({
        in: `lambda/${name}/index.ts`,
        out: `${name}/${BUNDLE_FILE.replace(/\.mjs$/, '')}`,
      })),
      outdir: staging,
      outExtension: { '.js': '.mjs' },
      metafile: true,
    });
    mkdirSync(join(ROOT, 'dist', 'functions'), { recursive: true });
    for (const name of FUNCTION_NAMES) {
      const target = join(ROOT, functionBundleDir(name));
      rmSync(target, { recursive: true, force: true });
      renameSync(join(staging, name), target);
    }
    return localInputs(metafile);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * The ops CLI as one ESM file with its SDK clients inside: the `isr` bin runs on plain Node
 * (no tsx, no TypeScript sources), whatever the consumer installed. Not minified, so a stack
 * trace still reads.
 */
async function buildCli(): Promise<string[]> {
  const { metafile } = await build({
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    absWorkingDir: ROOT,
    entryPoints: ['cli/main.ts'],
    outfile: join(ROOT, CLI_BUNDLE),
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire } from 'module'; const require = createRequire(import.meta.url);",
    },
    legalComments: 'external',
    logLevel: 'warning',
    metafile: true,
  });
  chmodSync(join(ROOT, CLI_BUNDLE), 0o755);
  return localInputs(metafile);
}

interface EsmEntry {
  readonly source: string;
  readonly output: string;
}

/**
 * Each `exports` entry of package.json whose code (`default`) or declarations (`types`) point
 * into `dist/esm`, with its source file: tsc emits both, and a bundled entry uses the types.
 */
export function esmEntries(): EsmEntry[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports?: Record<string, string | { types?: string; default?: string }>;
  };
  const prefix = `./${ESM_DIR}/`;
  return Object.values(pkg.exports ?? {})
    .map((target) =>
      typeof target === 'string' ? target : target.types?.replace(/\.d\.ts$/, '.js'),
    )
    .filter((target): target is string => target?.startsWith(prefix) === true)
    .map((target) => ({
      source: `${target.slice(prefix.length).replace(/\.js$/, '')}.ts`,
      output: target.slice(2),
    }));
}

/**
 * tsc, through its API so the entries come from `exports` (adding a subpath is one line in
 * package.json): the repository's compiler options, with JS and declarations emitted under
 * `dist/esm` mirroring the source tree. A type error fails the build.
 */
async function compileEntries(): Promise<string[]> {
  // Loaded only here: the compiler takes a second to load, and most runs build nothing.
  const { default: ts } = await import('typescript');
  const entries = esmEntries();
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const staging = join(ROOT, 'dist', `.esm-${process.pid}`);
  const program = ts.createProgram(
    entries.map((entry) => join(ROOT, entry.source)),
    {
      ...options,
      noEmit: false,
      declaration: true,
      rootDir: ROOT,
      outDir: staging,
      types: ['node'],
      sourceMap: false,
      incremental: false,
    },
  );
  try {
    const result = program.emit();
    const problems = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
    if (problems.length > 0 || result.emitSkipped) {
      throw new Error(
        ts.formatDiagnostics(problems, {
          getCanonicalFileName: (name) => name,
          getCurrentDirectory: () => ROOT,
          getNewLine: () => '\n',
        }),
      );
    }
    rmSync(join(ROOT, ESM_DIR), { recursive: true, force: true });
    renameSync(staging, join(ROOT, ESM_DIR));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return program
    .getSourceFiles()
    .map((file) => relative(ROOT, file.fileName))
    .filter((file) => !file.startsWith('node_modules/') && !file.startsWith('..'))
    .concat('package.json', 'tsconfig.json');
}

/** Whether the prebuilt function bundles exist (the construct needs nothing else). */
export const functionBundlesExist = () =>
  FUNCTION_NAMES.every((name) => existsSync(join(ROOT, functionBundleDir(name), BUNDLE_FILE)));
