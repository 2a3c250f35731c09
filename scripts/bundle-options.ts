/**
 * How each Lambda is bundled, in one place: the package build (`scripts/build.ts`) writes the
 * bundles the construct deploys with these options, and `bench/bundles.ts` builds its SDK-only
 * baseline with them, so a size or init-time ratio compares like with like.
 */
import type { BuildOptions } from 'esbuild';

/** The functions the construct deploys; each entry point is `lambda/<name>/index.ts`. */
export const FUNCTION_NAMES = ['origin', 'worker', 'revalidate', 'sweeper', 'purger'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/**
 * One minified ESM file per function, AWS SDK included so its version is the one the tests ran.
 * `require` is defined for CommonJS dependencies inside the ESM bundle. Names are not kept
 * (about 50 KB less per bundle, and less to parse at cold start): every error class the code
 * tells apart by name names itself in a string (ours in core/errors.ts; the SDK's and
 * Powertools' do the same). Source maps carry mappings only (no sources), so they stay small;
 * NODE_OPTIONS turns them on for stack traces. Licence notices go to `index.mjs.LEGAL.txt`
 * beside the bundle, in the same asset.
 */
export const LAMBDA_BUNDLE: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  keepNames: false,
  sourcemap: 'linked',
  sourcesContent: false,
  mainFields: ['module', 'main'],
  banner: {
    js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  },
  legalComments: 'external',
  logLevel: 'warning',
};

/** The file name of every bundle inside its asset directory (the handler is `index.handler`). */
export const BUNDLE_FILE = 'index.mjs';
