/**
 * The Lambda code the construct deploys: the bundles built once into the package
 * (`dist/functions/<fn>`, by `npm run build`), never bundled at synth. A consumer's app needs
 * neither esbuild nor this repository's sources, and deploys the files the tests ran.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Code } from 'aws-cdk-lib/aws-lambda';
import type { FunctionKind } from '../lambda/core/settings/index.js';

/** The handler inside each bundle directory (`index.mjs`, exporting `handler`). */
export const BUNDLE_HANDLER = 'index.handler';

/**
 * The package's root: the nearest directory above this module holding a package.json. It is
 * the repository when run from source (`lib/`) and the installed package when compiled
 * (`dist/esm/lib/`), so one lookup serves both.
 */
export function packageRoot(from: string = fileURLToPath(import.meta.url)): string {
  for (let directory = dirname(from); ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    if (dirname(directory) === directory) throw new Error(`no package.json above ${from}`);
  }
}

/** Where the prebuilt bundle of one function lives. */
export const functionBundleDirectory = (kind: FunctionKind, root = packageRoot()): string =>
  join(root, 'dist', 'functions', kind);

/** The prebuilt bundle of one function as a Lambda asset; a missing bundle says how to build it. */
export function functionCode(kind: FunctionKind, root = packageRoot()): Code {
  const directory = functionBundleDirectory(kind, root);
  if (!existsSync(join(directory, 'index.mjs'))) {
    throw new Error(
      `The prebuilt ${kind} function is missing (${directory}). In a checkout of the repository, ` +
        'run `npm run build` (npm test and cdk synth do it for you); an installed package ships it.',
    );
  }
  return Code.fromAsset(directory);
}
