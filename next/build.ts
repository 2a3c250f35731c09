/**
 * Builds `facetheory-isr/next` as the package ships it: one ESM file, the adapter and the
 * service rules it shares (the signed string, CloudFront's tag rules) bundled in, readable (a
 * library in someone's server: stack traces matter more than bytes). The SigV4 signer and the
 * AWS credential chain stay imports, loaded on first use only, from the package's dependencies.
 * The file imports nothing statically: Next bundles it into edge middleware too (below).
 * `npm run build -- next` writes `dist/next/index.mjs` (scripts/build-targets.ts).
 */
import { build, type BuildOptions, type Metafile, type Plugin } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { MAPPED_BUILTINS } from './node-builtins.js';

/** Loaded lazily by next/sigv4.ts, and only for an AWS_IAM endpoint. */
export const NEXT_ADAPTER_EXTERNALS = ['@smithy/signature-v4', '@aws-sdk/credential-provider-node'];

const NODE_BUILTINS_SHIM = fileURLToPath(new URL('./node-builtins.ts', import.meta.url));

/**
 * Next bundles the `cacheHandler` into an app's edge middleware (webpack and Turbopack alike),
 * where a `node:` import fails the build: each one the adapter makes goes to next/node-builtins.ts,
 * which takes it from the running Node on first call; any other fails this build, by name.
 */
const edgeSafeBuiltins: Plugin = {
  name: 'edge-safe-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) => {
      if ((MAPPED_BUILTINS as readonly string[]).includes(args.path)) {
        return { path: NODE_BUILTINS_SHIM };
      }
      return {
        errors: [
          {
            text: `${args.path} is not in next/node-builtins.ts: Next bundles the adapter into edge middleware, which has no node: imports`,
          },
        ],
      };
    });
  },
};

export const NEXT_ADAPTER_BUNDLING: BuildOptions = {
  entryPoints: [fileURLToPath(new URL('./index.ts', import.meta.url))],
  bundle: true,
  platform: 'node',
  format: 'esm',
  // Next.js 16 runs on Node 20.9+.
  target: 'node20',
  minify: false,
  external: NEXT_ADAPTER_EXTERNALS,
  plugins: [edgeSafeBuiltins],
  legalComments: 'none',
  logLevel: 'silent',
};

/** Bundles the adapter into `outfile` (`.mjs`, so Node reads it as ESM wherever it lies). */
export async function bundleNextAdapter(outfile: string): Promise<Metafile> {
  const result = await build({ ...NEXT_ADAPTER_BUNDLING, outfile, metafile: true });
  return result.metafile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2] ?? 'dist/next';
  await bundleNextAdapter(`${outdir}/index.mjs`);
  console.log(`${outdir}/index.mjs`);
}
